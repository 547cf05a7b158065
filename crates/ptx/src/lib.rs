//! PTX front end: text → located syntax tree, or located errors.
//!
//! ```
//! let module = ptx::parse("k.ptx", ".version 7.8\n.target sm_70\n.address_size 64\n").unwrap();
//! assert_eq!(module.version, Some((7, 8)));
//! let text = ptx::print(&module);
//! assert_eq!(ptx::parse("k.ptx", &text).unwrap().version, Some((7, 8)));
//! ```
//!
//! # Invariants
//!
//! - **Syntax only.** This crate knows nothing of simulation or of what instructions mean;
//!   it only knows what PTX source looks like. Which modifiers an opcode accepts, whether
//!   a register is declared, what a label refers to: all decided downstream (`ir`).
//! - **Located.** Every tree node carries the byte [`ast::Span`] it came from; every error
//!   carries file, line, column, the offending token and what was expected
//!   ([`Diagnostic`]).
//! - **Total.** [`parse`] returns for every input — arbitrary bytes made UTF-8, unbalanced
//!   or deeply nested braces, unterminated strings and comments, huge numbers — without
//!   panicking or looping: the lexer consumes at least one byte per step, the parser at
//!   least one token per loop iteration, and recursion stops at
//!   [`MAX_NESTING_DEPTH`] levels. Inputs of 4 GiB or more are rejected up front
//!   because spans are 32-bit.
//! - **Round trip.** For every tree `t` that [`parse`] returns, `parse(print(t))` returns
//!   `t` again once both have gone through [`ast::Module::erase_spans`]. The printer's
//!   output is canonical: printing is idempotent after one parse.
//! - **All errors, first first.** On failure [`ParseError`] holds every error found (the
//!   parser recovers at the next `;` or `}`), sorted by position, capped at
//!   [`MAX_ERRORS`]; `ParseError::first` is the earliest.
//! - **An empty file is a valid, empty module.** Whether a module without `.version` is
//!   acceptable is a question for the consumer.
//! - **One spelling per tree.** Where PTX has several spellings for one thing the tree
//!   keeps the meaning, not the spelling: `0x10`, `020`, `0b10000` and `16U` are all
//!   `Immediate::Int(16)`; `[a+0]` is `[a]`; `1.5` is `Immediate::F64` of its bits;
//!   `.callprototype _ (…)` equals `()_ (…)`; `.shared .b8 a, b;` is two declarations.
//!
//! # Code map
//!
//! - `ast`: the tree, the contract with `ir`; `Module::erase_spans`.
//! - `lexer`: bytes → tokens, on demand, without allocation; records lexical errors.
//! - `parser`: recursive descent with one token of lookahead, error recovery and a depth
//!   bound.
//! - `printer`: `Display` for the tree; [`print()`].
//! - `diagnostic`: [`LineIndex`], [`Diagnostic`], [`ParseError`].
//!
//! # Not supported
//!
//! Rejected with a located error, because no compiler emits them for the CUDA C++ this
//! project runs: `.alias`; `.attribute(.unified(…))`; sampler initializers
//! (`= { filter_mode = … }`); the masked byte-initializer form `0xFF(generic(x))`; `#`
//! preprocessor lines; `.abi_preserve`; several strings in one
//! `.pragma`.

pub mod ast;
mod diagnostic;
mod lexer;
mod parser;
mod printer;

pub use diagnostic::{Diagnostic, LineIndex, ParseError, MAX_SHOWN_LINE};
pub use printer::print;

/// Deepest nesting of `{ }` scopes, initializer lists and nested operands [`parse`] accepts.
pub const MAX_NESTING_DEPTH: u32 = parser::MAX_DEPTH;
/// [`parse`] stops after this many errors.
pub const MAX_ERRORS: usize = parser::MAX_ERRORS;

/// Parses one PTX file. `file_name` is used only in error messages.
pub fn parse(file_name: &str, source: &str) -> Result<ast::Module, ParseError> {
    if u32::try_from(source.len()).map_or(true, |n| n == u32::MAX) {
        return Err(ParseError {
            diagnostics: vec![Diagnostic {
                file: file_name.to_string(),
                line: 1,
                column: 1,
                span: ast::Span::default(),
                message: format!(
                    "file too large ({} bytes; the limit is 4 GiB)",
                    source.len()
                ),
                expected: None,
                found: String::new(),
                source_line: String::new(),
                source_line_column: 1,
            }],
        });
    }
    let mut parser = parser::Parser::new(source);
    let module = parser.module();
    match ParseError::from_raw(file_name, source, parser.into_errors()) {
        Some(err) => Err(err),
        None => Ok(module),
    }
}

//! The library half of the `regsim` command: what other subcommands and outside tools
//! reuse. The binary (`main.rs`) holds the command-line front ends.

pub mod scratch;
pub mod sweep;

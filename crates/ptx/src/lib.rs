//! PTX front end: text → located syntax tree, or located errors.
//!
//! Invariant: this crate knows nothing of simulation or of what instructions mean; it
//! only knows what PTX source looks like.

pub mod ast;

//! Tests of the analyses: hand-checked graphs, and property tests against naive
//! reference computations on random graphs.

mod hand;
mod naive;
mod props;

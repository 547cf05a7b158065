//! Cycle, cache-access and miss-count correlation of regsim against a reference simulator.
//!
//! The data flow is one way: [`input`] reads the reference simulator's per-program JSON
//! files (GPGPU-Sim's runs in `reference/gpgpusim/<config>/`) and regsim's statistics
//! files (`regsim run --stats`); [`compare::correlate`] matches runs by program and
//! arguments and kernels by launch order, and computes per-kernel errors and the summary
//! figures ([`metrics`]: mean absolute percentage error, Pearson correlation); [`table`] renders
//! the result as text or Markdown and [`svg`] draws a log-log scatter with the y = x line.
//! Everything is deterministic: programs are ordered by name, kernels by launch.
//!
//! `regsim correlate` is the command-line front end; the HTML report reuses
//! [`compare::Correlation`] and [`svg::scatter_svg`].
//!
//! ```
//! use correlate::{correlate, load_reference_dir, load_regsim_stats, Metric, VerdictRule};
//! # fn demo() -> Result<(), correlate::InputError> {
//! let refs = load_reference_dir("reference/gpgpusim/SM2_GTX480".as_ref(), &VerdictRule::Any)?;
//! let runs = vec![load_regsim_stats("results/gtx480/bfs.json".as_ref())?];
//! let c = correlate(&refs.items, &runs);
//! if let Some(why) = c.why_nothing_compared() {
//!     eprintln!("{why}");
//! }
//! if let Some(s) = c.summary(Metric::Cycles) {
//!     println!("{} kernels, MAPE {:?}%, r {:?}", s.kernels, s.mape_percent, s.pearson);
//! }
//! print!("{}", correlate::table::render(&c, false));
//! let svg: String = correlate::svg::scatter_svg(&c.scatter(Metric::Cycles));
//! # let _ = svg;
//! # Ok(())
//! # }
//! ```

pub mod compare;
pub mod input;
pub mod metrics;
pub mod svg;
pub mod table;

pub use compare::{correlate, Correlation, Metric};
pub use input::{
    load_reference_dir, load_regsim_files, load_regsim_stats, InputError, VerdictRule,
};

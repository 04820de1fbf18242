//! Cosine's search. This crate holds Endure's nominal and robust tuning (the KL dual solved with argmin) and
//! Endure's uncertainty benchmark.
#![warn(missing_docs)]

pub mod robust;
pub mod tuning;
pub mod uncertainty;

pub use robust::{kl_divergence, kl_worst_case, kl_worst_case_brent, WorstCase};
pub use tuning::{tune, TuneError, TuneProblem, TuneResult};

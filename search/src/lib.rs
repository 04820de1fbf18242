//! Cosine's search. This crate holds Endure's nominal and robust tuning (the KL dual solved with argmin) and
//! Endure's uncertainty benchmark.
#![warn(missing_docs)]
// `!(x > 0.0)` is deliberate: it also rejects NaN.
#![allow(clippy::neg_cmp_op_on_partial_ord)]

pub mod robust;
pub mod tuning;
pub mod uncertainty;

pub use robust::{kl_divergence, kl_worst_case, kl_worst_case_brent, WorstCase};
pub use tuning::{tune, TuneError, TuneProblem, TuneResult};

//! Cosine's search: the design space of a VM ([`designs`]), the hardware space and the cost/performance
//! continuum, Endure's nominal and robust tuning (the KL dual solved with argmin) and Endure's uncertainty
//! benchmark.
#![deny(missing_docs)]
// a library reports failures as typed errors; unit tests may unwrap
#![deny(clippy::unwrap_used)]
#![cfg_attr(test, allow(clippy::unwrap_used))]
// `!(x > 0.0)` is deliberate: it also rejects NaN.
#![allow(clippy::neg_cmp_op_on_partial_ord)]

pub mod continuum;
pub mod designs;
pub mod robust;
pub mod space;
pub mod tuning;
pub mod uncertainty;

pub use robust::{kl_divergence, kl_worst_case, kl_worst_case_brent, kl_worst_value, WorstCase};
pub use tuning::{tune, TuneError, TuneProblem, TuneResult};

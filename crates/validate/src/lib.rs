//! `cosine-validate`: the engine measured against the cost model. It runs the engine under the YCSB harness
//! (load, settle, unmeasured warm-up writes and measured slices, every read checked: [`run_bench`]), builds
//! the cases `cosine validate` compares (the fixed class designs, or held-out designs: the search's picks and
//! random valid designs, [`cases`]), compares the model's I/Os per operation with the engine's per case and
//! operation type ([`run_case`], [`summary`]), and runs Algorithm 1 on the engine for φ
//! ([`calibrate_engine`]). The `cosine` command parses arguments and prints; the logic lives here, where it is
//! tested.
#![deny(missing_docs)]
#![deny(clippy::unwrap_used)]
#![cfg_attr(test, allow(clippy::unwrap_used))]

mod calibrate;
mod cases;
pub mod cgroup;
mod cpu;
mod harness;
pub mod overhead;
mod pace;
pub mod probe;
pub mod profile;
mod report;

pub use calibrate::calibrate_engine;
pub use cases::{cases, fixed_variants, random_design, Case, CaseSpec};
pub use cpu::{measure_engine_cpu, measure_op_cpu, CpuMeasured, CPU_ROUNDS};
pub use harness::{class_designs, run_bench, searched_design, NoProgress, Progress, Run, RunSpec};
pub use pace::{pace_of, Pace};
pub use report::{
    accuracy, compare, rescore, run_case, run_case_loads, summary, Measured, VALIDATE_SLICES,
};

/// What validation and calibration fail with.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The engine (opening, settling).
    #[error(transparent)]
    Engine(#[from] cosine_engine::Error),
    /// The store under the harness.
    #[error(transparent)]
    Store(#[from] cosine_ycsb::StoreError),
    /// A design that does not validate.
    #[error(transparent)]
    Design(#[from] cosine_design::DesignError),
    /// The engine returned wrong results (every read and scan is checked).
    #[error("{count} wrong results; the first: {first}")]
    WrongResults {
        /// How many.
        count: u64,
        /// The first, described.
        first: String,
    },
    /// No design of the search fits the memory.
    #[error("no design fits {0} bytes")]
    NoDesign(u64),
    /// Bad input or an empty run.
    #[error("{0}")]
    Invalid(String),
}

/// Validation's result.
pub type Result<T> = std::result::Result<T, Error>;

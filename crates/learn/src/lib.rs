//! Tuning from measured runs, after RTune (Jin, Lee and Park, GECCO 2022; seed 001): where Cosine's analytical
//! model prices a design, this crate measures configurations and learns from the measurements.
//!
//! * [`knobs`]: the knob spaces (our engine's design primitives and choices) and the map between a point of
//!   the unit cube and a configuration;
//! * [`lhs`]: Latin-hypercube sampling of configurations;
//! * [`workloads`]: the basic workloads a repository is measured on (RTune's read-random/write-random mixes
//!   and update-random at several value sizes) and the held-out targets that never enter it;
//! * [`repo`]: the repository, one JSON line per measured run, appended and resumable;
//! * [`collect`]: measuring configurations on workloads into a repository;
//! * [`represent`]: workload representation (five statistics per internal metric) and Mahalanobis matching;
//! * [`surrogate`]: the network from a configuration to its outcomes (candle);
//! * [`ga`]: the genetic search with the surrogate as fitness;
//! * [`tune`]: the pipeline: probe, represent, match, combine, learn, search, and measure the best candidates;
//! * [`evaluate`]: the held-out evaluation: every method's pick on targets outside the repository, measured
//!   side by side.

#![deny(missing_docs)]

pub mod collect;
pub mod evaluate;
pub mod ga;
pub mod knobs;
pub mod lhs;
pub mod repo;
pub mod represent;
pub mod surrogate;
pub mod tune;
pub mod workloads;

/// What went wrong.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// A knob value or a point that makes no configuration.
    #[error("knob: {0}")]
    Knob(String),
    /// The repository file could not be read or written.
    #[error("repository {path}: {source}")]
    Io {
        /// The file.
        path: String,
        /// The error.
        source: std::io::Error,
    },
    /// A repository line that does not parse (other than a torn last line).
    #[error("repository {path}, line {line}: {message}")]
    Corrupt {
        /// The file.
        path: String,
        /// 1-based line.
        line: usize,
        /// What the parser said.
        message: String,
    },
    /// A measured run failed (the engine's error, or wrong results).
    #[error("measuring {config} on {workload}: {message}")]
    Run {
        /// The workload.
        workload: String,
        /// The configuration's id.
        config: String,
        /// What failed.
        message: String,
    },
    /// A request that cannot be carried out as given.
    #[error("{0}")]
    Invalid(String),
}

/// This crate's results.
pub type Result<T> = std::result::Result<T, Error>;

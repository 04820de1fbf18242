//! Typed errors for loading and validating designs and workloads.

use thiserror::Error;

/// Everything that can be wrong with a `Design`, a `Workload` or a `Vm`.
#[derive(Debug, Error, Clone, PartialEq)]
#[non_exhaustive]
pub enum DesignError {
    /// The text is not valid JSON for the type (syntax, unknown field, wrong type).
    #[error("malformed {what}: {message}")]
    Malformed {
        /// Which document: "design", "workload" or "vm".
        what: &'static str,
        /// The parser's message, with line and column.
        message: String,
    },
    /// A memory figure (bytes) was negative or not finite.
    #[error("{field} must be a non-negative number of bytes, got {value}")]
    NegativeMemory {
        /// The offending field.
        field: &'static str,
        /// The value given.
        value: f64,
    },
    /// The size ratio T is below 2.
    #[error("size_ratio T must be at least 2, got {0}")]
    SizeRatio(u64),
    /// K (runs per hot level) or Z (runs per cold level) is zero or not below T.
    #[error("{name} must be in [1, T-1] = [1, {max}], got {value}")]
    RunsPerLevel {
        /// "hot_runs (K)" or "cold_runs (Z)".
        name: &'static str,
        /// The value given.
        value: u64,
        /// T − 1.
        max: u64,
    },
    /// A count that must be positive is zero (entries, key size, block size, ...).
    #[error("{0} must be greater than zero")]
    Zero(&'static str),
    /// An operation fraction lies outside [0, 1] or is not finite.
    #[error("fraction {name} = {value} is outside [0, 1]")]
    FractionRange {
        /// The operation's name.
        name: &'static str,
        /// The value given.
        value: f64,
    },
    /// The operation fractions do not add up to 1 (within 1e-9).
    #[error("operation fractions sum to {0}, not 1 (tolerance 1e-9)")]
    FractionSum(f64),
    /// A probability or parameter of a key distribution is invalid.
    #[error("invalid key distribution: {0}")]
    Distribution(String),
    /// A value is outside the range Cosine Table 1 allows.
    #[error("{field} = {value} is out of range: {reason}")]
    OutOfRange {
        /// The field.
        field: &'static str,
        /// The value, printed.
        value: String,
        /// What the allowed range is.
        reason: &'static str,
    },
    /// The recorded class contradicts the primitives (Algorithm 3).
    #[error("class {recorded} contradicts the primitives: {reason}")]
    ClassMismatch {
        /// The class written in the file.
        recorded: String,
        /// Why it cannot be that class.
        reason: String,
    },
    /// No workload of that name is known.
    #[error("unknown workload '{0}' (known: ycsb-a..ycsb-f, endure-w0..endure-w14)")]
    UnknownWorkload(String),
}

/// Result alias for this crate.
pub type Result<T> = std::result::Result<T, DesignError>;

//! Cosine's shared vocabulary: the `Design` that the search writes and the engine reads, the `Workload` that
//! the cost model scores and the benchmark runs, and the `Vm` the search prices. Every type is serde JSON and
//! validated on load with typed errors.
#![warn(missing_docs)]

pub mod design;
pub mod error;
pub mod named;
pub mod vm;
pub mod workload;

pub use design::{
    Compaction, Design, DesignClass, FilePicking, FilterGranularity, LogKind, RunStrategy, MAX_KEY_BYTES,
    MAX_VALUE_BYTES,
};
pub use error::{DesignError, Result};
pub use named::{endure_workload, named_workload, workload_names, ENDURE_EXPECTED};
pub use vm::Vm;
pub use workload::{KeyDistribution, OperationMix, Partition, Workload};

/// Loads a workload from a name (`ycsb-a`, `endure-w3`, ...) or, if `spec` names an existing file, from that
/// workload.json file.
pub fn load_workload(spec: &str) -> std::result::Result<Workload, LoadError> {
    let path = std::path::Path::new(spec);
    if path.is_file() {
        let text = std::fs::read_to_string(path).map_err(|e| LoadError::Io(spec.to_string(), e.to_string()))?;
        return Ok(Workload::from_json(&text)?);
    }
    Ok(named_workload(spec)?)
}

/// Loads and validates a design.json file.
pub fn load_design(path: &str) -> std::result::Result<Design, LoadError> {
    let text = std::fs::read_to_string(path).map_err(|e| LoadError::Io(path.to_string(), e.to_string()))?;
    Ok(Design::from_json(&text)?)
}

/// Failure to load a design or workload from disk.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum LoadError {
    /// The file could not be read.
    #[error("cannot read {0}: {1}")]
    Io(String, String),
    /// The content is invalid.
    #[error(transparent)]
    Invalid(#[from] DesignError),
}

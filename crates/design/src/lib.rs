//! Cosine's shared vocabulary: the `Design` that the search writes and the engine reads, the `Workload` that
//! the cost model scores and the benchmark runs, and the `Vm` the search prices. Every type is serde JSON and
//! validated on load with typed errors.
#![deny(missing_docs)]
// a library reports failures as typed errors; unit tests may unwrap
#![deny(clippy::unwrap_used)]
#![cfg_attr(test, allow(clippy::unwrap_used))]

pub mod design;
pub mod error;
pub mod named;
pub mod planner;
pub mod rocksdb;
pub mod shape;
pub mod simulate;
pub mod tree_view;
pub mod vm;
pub mod workload;

pub use design::{
    Compaction, Design, DesignClass, FilePicking, FilterGranularity, LogKind, RunStrategy,
    ASSUMED_ENTRY_BYTES, CACHE_ENTRY_OVERHEAD_BYTES, DEFAULT_MUTABLE_FRACTION, MAX_KEY_BYTES,
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
        let text = std::fs::read_to_string(path)
            .map_err(|e| LoadError::Io(spec.to_string(), e.to_string()))?;
        return Ok(Workload::from_json(&text)?);
    }
    Ok(named_workload(spec)?)
}

/// Loads and validates a design.json file.
pub fn load_design(path: &str) -> std::result::Result<Design, LoadError> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| LoadError::Io(path.to_string(), e.to_string()))?;
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

/// A multi-VM deployment: one shard per VM, each with the design chosen for its VM type, written by
/// `cosine search --deployment-out` and read by `cosine generate --deployment`.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Deployment {
    /// Cloud provider.
    pub provider: String,
    /// One entry per VM.
    pub shards: Vec<ShardSpec>,
}

/// One VM of a deployment.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ShardSpec {
    /// VM type.
    pub vm: String,
    /// VM memory in bytes (the shard's share of the keys is proportional to it).
    pub memory_bytes: u64,
    /// The engine design for this VM.
    pub design: Design,
    /// Memory the VM keeps outside the design: its operating system's and the engine's own overhead (the
    /// process, its threads, allocator slack), as the search set it aside. Absent in deployments written before
    /// the search kept a reserve.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reserved_bytes: Option<u64>,
}

impl Deployment {
    /// Parses and validates a deployment (every design valid, at least one shard, memory positive).
    pub fn from_json(text: &str) -> Result<Self> {
        let d: Deployment = serde_json::from_str(text).map_err(|e| DesignError::Malformed {
            what: "deployment",
            message: e.to_string(),
        })?;
        if d.shards.is_empty() {
            return Err(DesignError::Zero("shards"));
        }
        for s in &d.shards {
            if s.memory_bytes == 0 {
                return Err(DesignError::Zero("memory_bytes"));
            }
            s.design.validate()?;
        }
        Ok(d)
    }

    /// The deployment as pretty-printed JSON (what [`Deployment::from_json`] reads).
    pub fn to_json(&self) -> String {
        serde_json::to_string_pretty(self).unwrap_or_default()
    }
}

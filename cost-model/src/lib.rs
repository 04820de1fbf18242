//! Cosine's cost models.
//!
//! * [`DistributionAware`]: Cosine's distribution-aware I/O model (paper Table 2, Eq. 1), as the authors' code
//!   defines it, with MODEL.md §8's fixes and a [`ReferenceQuirks`] switch for the unfixed arithmetic.
//! * [`WorstCase`]: the Design Continuum worst-case model, behind the same [`IoModel`] trait.
//! * [`bloom`]: Bloom-filter FPRs and Monkey/Dostoevsky allocation (used by the engine's filters too).
//! * [`endure`]: Endure's LSM model (Z0, Z1, Q, W) for nominal and robust tuning.
//! * [`cpu`]: Amdahl's g(φ, η), the φ library, the CPU an operation costs per engine, and the paper's Eq. 3.
//! * [`requests`] and [`machine`]: what an operation asks of a volume, and what a machine delivers within its
//!   volume's IOPS and bandwidth, its cores and the requests in flight (the default throughput model); the
//!   memory a VM keeps outside a design and the time a write buffer takes to recover.
#![deny(missing_docs)]
// a library reports failures as typed errors; unit tests may unwrap
#![deny(clippy::unwrap_used)]
#![cfg_attr(test, allow(clippy::unwrap_used))]
// `!(x > 0.0)` is deliberate: it also rejects NaN.
#![allow(clippy::neg_cmp_op_on_partial_ord)]

pub mod bloom;
pub mod cpu;
pub mod dist;
pub mod endure;
pub mod keys;
pub mod layout;
pub mod loaded;
pub mod machine;
pub mod probes;
pub mod quirks;
pub mod requests;
pub mod worst;

pub use dist::DistributionAware;
pub use quirks::ReferenceQuirks;
pub use worst::WorstCase;

use cosine_design::{Design, DesignClass, DesignError, Workload};
use serde::{Deserialize, Serialize};
use thiserror::Error;

/// Why a design cannot be scored for a workload.
#[derive(Debug, Error, Clone, PartialEq)]
#[non_exhaustive]
pub enum ModelError {
    /// The design or workload failed validation.
    #[error(transparent)]
    Invalid(#[from] DesignError),
    /// The write buffer holds less than one entry.
    #[error("buffer of {buffer_bytes} bytes holds no {entry_bytes}-byte entry")]
    BufferTooSmall {
        /// M_B.
        buffer_bytes: u64,
        /// E.
        entry_bytes: u64,
    },
}

/// Expected I/Os of one operation of each type.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize, Default)]
pub struct PerOp {
    /// σ_l: point lookup of an existing key.
    pub lookup: f64,
    /// σ_n: point lookup of a missing key.
    pub empty_lookup: f64,
    /// σ_p: insert.
    pub insert: f64,
    /// σ_u: blind update.
    pub blind_update: f64,
    /// σ_w: read-modify-write.
    pub rmw: f64,
    /// σ_s: long range scan of the workload's scan length.
    pub long_scan: f64,
    /// Short scan (one seek per run).
    pub short_scan: f64,
}

/// The model's answer for one design and workload.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct IoCost {
    /// The design class (Algorithm 3) with the derived Y.
    pub class: DesignClass,
    /// L: disk levels.
    pub levels: u32,
    /// Y: cold levels.
    pub cold_levels: u32,
    /// R: expected false positives of a zero-result lookup over the hot levels.
    pub fpr_sum: f64,
    /// Filter memory used in bytes (after any split the model applied).
    pub filter_bytes: f64,
    /// Fence memory used in bytes.
    pub fence_bytes: f64,
    /// Per-operation costs.
    pub per_op: PerOp,
    /// The scan cost charged to the workload's scans (short scan when the scan fits in a block, else long).
    pub scan: f64,
    /// Σ θ·σ: expected I/Os of one operation of the workload.
    pub per_operation: f64,
    /// Eq. 1: χ · Σ θ·σ, the workload's total I/Os.
    pub total: f64,
    /// Runs a point lookup consults in memory on its way (what its CPU grows with).
    #[serde(default)]
    pub probes: probes::Probes,
}

impl IoCost {
    /// The cost of an LSH-class design: `levels` levels of hash-indexed runs, no filters, `scan` I/Os per scan,
    /// `probes` hash indexes a lookup consults.
    pub(crate) fn lsh(
        design: &Design,
        workload: &Workload,
        levels: u32,
        per_op: PerOp,
        scan: f64,
        probes: probes::Probes,
    ) -> IoCost {
        let per_operation = weigh(workload, &per_op, scan);
        IoCost {
            class: DesignClass::Lsh,
            levels,
            cold_levels: 0,
            fpr_sum: 0.0,
            filter_bytes: 0.0,
            fence_bytes: design.fence_bytes as f64,
            per_op,
            scan,
            per_operation,
            total: per_operation * workload.operations as f64,
            probes,
        }
    }
}

/// A model that scores a design on a workload in I/Os.
pub trait IoModel {
    /// Expected I/Os per operation type and for the whole workload.
    fn evaluate(&self, design: &Design, workload: &Workload) -> Result<IoCost, ModelError>;
}

/// Eq. 1's weighting of per-operation costs by the workload mix (scans use `scan`).
pub fn weigh(workload: &Workload, per_op: &PerOp, scan: f64) -> f64 {
    let m = &workload.mix;
    m.lookup * per_op.lookup
        + m.empty_lookup * per_op.empty_lookup
        + m.insert * per_op.insert
        + m.blind_update * per_op.blind_update
        + m.rmw * per_op.rmw
        + m.scan * scan
}

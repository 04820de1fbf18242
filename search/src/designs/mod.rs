//! The design space of one VM (Cosine Section 5, Algorithm 2 lines 13-25): for a shard of the data on one VM
//! type, walk T, K, Z and the buffer memory M_B (hopping in steps of ε·M, then a binary refinement around the
//! best), split the rest of memory between fences and filters so as to keep as many levels hot as possible,
//! score each design with the I/O model, φ and Eq. 3, and keep the fastest. B-tree-like and LSH-like designs
//! are searched alongside.

mod fixed;
mod grid;
mod lsh;
mod memo;
mod price;
mod shapes;
mod templates;

pub use fixed::{Baseline, WIREDTIGER_LEAF_BYTES};
pub use grid::REFINED_SHAPES;
pub use lsh::LSH_DIVISORS;
pub use memo::{EvalMemo, Tally};
pub use shapes::{with_class_defaults, Shape, BTREE_SIZE_RATIOS, LSM_SIZE_RATIOS};
pub use templates::{Template, CACHE_SHARES, REFINED_NEIGHBOURS};

use cosine_cost_model::cpu::PhiLibrary;
use cosine_cost_model::dist::LshEngine;
use cosine_cost_model::keys::KeySpace;
use cosine_cost_model::ReferenceQuirks;
use cosine_design::{Design, DesignClass, LogKind, Workload};
use serde::Serialize;
use std::sync::Arc;

/// Operations one core serves per second when no I/O is needed ([R]: about 5 µs of CPU per operation). It keeps
/// the latency of a shard that fits in memory finite.
pub const CPU_OPS_PER_CORE: f64 = 200_000.0;

/// The design Cosine picks for `workload` on one machine that gives the engine `memory_bytes` (buffer, filters
/// and fences) and `cores` cores, with 4 KiB blocks and a local SSD's IOPS: what `cosine bench` and the peer
/// comparison run.
pub fn best_for_machine(
    workload: &Workload,
    memory_bytes: u64,
    cores: u32,
    phi: &PhiLibrary,
) -> Option<Design> {
    machine_shard(workload, memory_bytes, cores, phi)
        .best()
        .map(|s| s.design)
}

/// The best leveled LSM design (K = Z = 1, filters, the design a RocksDB can be configured to) for `workload` on
/// one machine, as [`best_for_machine`] sees the machine: what the peer comparison gives RocksDB as its
/// "Cosine-tuned" configuration.
pub fn best_leveled_lsm_for_machine(
    workload: &Workload,
    memory_bytes: u64,
    cores: u32,
    phi: &PhiLibrary,
) -> Option<Design> {
    machine_shard(workload, memory_bytes, cores, phi)
        .best_leveled_lsm()
        .map(|s| s.design)
}

/// The LSH design (our engine's hash-indexed log at its fastest size ratio and last-level layout,
/// [`Shard::best_lsh`]) for `workload` on one machine, as
/// [`best_for_machine`] sees the machine, with the log kind `log`: what the peer comparison runs beside FASTER.
pub fn lsh_for_machine(
    workload: &Workload,
    memory_bytes: u64,
    cores: u32,
    phi: &PhiLibrary,
    log: LogKind,
) -> Option<Design> {
    let mut d = with_class_defaults(
        machine_shard(workload, memory_bytes, cores, phi)
            .best_lsh_with(|d| d.log = log)?
            .1
            .design,
        DesignClass::Lsh,
    );
    d.log = log;
    Some(d)
}

pub(super) fn machine_shard<'a>(
    workload: &Workload,
    memory_bytes: u64,
    cores: u32,
    phi: &'a PhiLibrary,
) -> Shard<'a> {
    Shard {
        keys: Arc::new(KeySpace::from_workload(workload)),
        workload: workload.clone(),
        memory_bytes,
        vcpus: cores.max(1),
        iops: 20_000.0,
        block_bytes: 4096,
        phi,
        rho: None,
        epsilon: 0.1,
        system_phi: None,
        quirks: ReferenceQuirks::NONE,
        lsh_engine: LshEngine::Cosine,
        scored: None,
        memo: None,
    }
}

/// One VM's share of the problem.
#[derive(Clone, Debug)]
pub struct Shard<'a> {
    /// The shard's workload (entries N_j and operations χ_j already scaled).
    pub workload: Workload,
    /// Its key space.
    pub keys: Arc<KeySpace>,
    /// VM memory in bytes.
    pub memory_bytes: u64,
    /// VM cores (η).
    pub vcpus: u32,
    /// IOPS of the VM's volume.
    pub iops: f64,
    /// I/O block size in bytes.
    pub block_bytes: u64,
    /// φ values.
    pub phi: &'a PhiLibrary,
    /// Endure's KL radius for the robust objective (None: nominal, on the noisy workload).
    pub rho: Option<f64>,
    /// ε of the memory hopping.
    pub epsilon: f64,
    /// φ of a fixed system (RocksDB, WiredTiger, FASTER) instead of the design class's.
    pub system_phi: Option<cosine_cost_model::cpu::PhiEntry>,
    /// The model's quirks: none for Cosine's designs and the fixed systems alike.
    pub quirks: ReferenceQuirks,
    /// The engine that runs an LSH design: ours, FASTER's for its baseline ([`Baseline::lsh_engine`]).
    pub lsh_engine: LshEngine,
    /// Counts the designs scored.
    pub scored: Option<&'a Tally>,
    /// Evaluations shared with the search's other shards (None: every design is priced afresh).
    pub memo: Option<&'a EvalMemo>,
}

/// A scored design.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Scored {
    /// The design.
    pub design: Design,
    /// Its class (Algorithm 3).
    pub class: DesignClass,
    /// Expected I/Os per operation (worst case over the KL ball with ρ).
    pub io_per_op: f64,
    /// φ of the workload for this class.
    pub phi: f64,
    /// Seconds to run the shard's operations (Eq. 3, plus the CPU floor).
    pub latency_s: f64,
    /// What the design search that found it settled on (None for a design scored alone): tried again on a
    /// shard of a nearby size by [`Shard::best_from`].
    #[serde(skip)]
    pub template: Option<Template>,
}

#[cfg(test)]
mod tests;

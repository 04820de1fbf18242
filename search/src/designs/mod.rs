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

use cosine_cost_model::cpu::{CpuLibrary, OpCpu, PhiLibrary};
use cosine_cost_model::dist::LshEngine;
use cosine_cost_model::keys::KeySpace;
use cosine_cost_model::machine::{Delivered, Machine, ThroughputModel};
use cosine_cost_model::requests::OpIo;
use cosine_cost_model::ReferenceQuirks;
use cosine_design::{Design, DesignClass, LogKind, Workload};
use serde::Serialize;
use std::sync::Arc;

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
        machine: Machine {
            vcpus: cores.max(1),
            iops: 20_000.0,
            mibps: 500.0,
            read_latency_s: 100e-6,
            in_flight: cores.max(1) as f64,
            page_cache_bytes: 0.0,
        },
        block_bytes: 4096,
        phi,
        cpu: learned_cpu(),
        throughput: ThroughputModel::Physical,
        max_recovery_s: DEFAULT_MAX_RECOVERY_S,
        rho: None,
        epsilon: 0.1,
        system_phi: None,
        system_cpu: None,
        quirks: ReferenceQuirks::NONE,
        lsh_engine: LshEngine::Cosine,
        scored: None,
        memo: None,
    }
}

/// Seconds a design's write buffer may take to recover by default (`cosine search --max-recovery`).
pub const DEFAULT_MAX_RECOVERY_S: f64 = 60.0;

/// The CPU library `cosine profile` learned here, parsed once for the process.
pub fn learned_cpu() -> &'static CpuLibrary {
    static CPU: std::sync::OnceLock<CpuLibrary> = std::sync::OnceLock::new();
    CPU.get_or_init(CpuLibrary::learned)
}

/// One VM's share of the problem.
#[derive(Clone, Debug)]
pub struct Shard<'a> {
    /// The shard's workload (entries N_j and operations χ_j already scaled).
    pub workload: Workload,
    /// Its key space.
    pub keys: Arc<KeySpace>,
    /// Memory the design may take (M): the VM's less its reserve for the operating system and the engine's
    /// overhead (the paper's model: all of it).
    pub memory_bytes: u64,
    /// The VM's and its volume's limits: cores, IOPS, bandwidth, read latency, requests in flight.
    pub machine: Machine,
    /// I/O block size in bytes.
    pub block_bytes: u64,
    /// φ values.
    pub phi: &'a PhiLibrary,
    /// CPU an operation costs per engine and operation type.
    pub cpu: &'a CpuLibrary,
    /// How I/Os become time: within the machine's limits (the default) or the paper's Eq. 3.
    pub throughput: ThroughputModel,
    /// Seconds a design's write buffer may take to recover (the physical model; the paper's has no bound).
    pub max_recovery_s: f64,
    /// Endure's KL radius for the robust objective (None: nominal, on the noisy workload).
    pub rho: Option<f64>,
    /// ε of the memory hopping.
    pub epsilon: f64,
    /// φ of a fixed system (RocksDB, WiredTiger, FASTER) instead of the design class's.
    pub system_phi: Option<cosine_cost_model::cpu::PhiEntry>,
    /// CPU costs of a fixed system instead of the design class's.
    pub system_cpu: Option<OpCpu>,
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
    /// Expected I/Os (blocks) per operation (worst case over the KL ball with ρ).
    pub io_per_op: f64,
    /// What one operation asks of the volume: random reads, sequential blocks, log bytes.
    pub requests: OpIo,
    /// φ of the workload for this class.
    pub phi: f64,
    /// CPU seconds one operation costs on one core.
    pub cpu_s: f64,
    /// Seconds to run the shard's operations.
    pub latency_s: f64,
    /// What the machine delivers for it, each limit and what bounds it (the physical model; None under the
    /// paper's Eq. 3).
    pub delivered: Option<Delivered>,
    /// Seconds a restart takes to replay its write buffer's log and flush its frozen buffer.
    pub recovery_s: f64,
    /// What the design search that found it settled on (None for a design scored alone): tried again on a
    /// shard of a nearby size by [`Shard::best_from`].
    #[serde(skip)]
    pub template: Option<Template>,
}

#[cfg(test)]
mod tests;

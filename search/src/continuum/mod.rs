//! The hardware space and the cost/performance continuum (Cosine Algorithm 2, Steps 1-3).
//!
//! Per provider: the VM types that are not dominated (another type with at least the memory, cores and disk
//! limits for at most the price), and configurations of one type × count or of two types mixed, whose monthly
//! cost (compute + storage + SLAs) lies in the budget range. Each VM gets a shard of the data and of the
//! operations in proportion to its memory; its best design comes from [`crate::designs`]; a configuration's
//! latency is its slowest VM's. Full design searches run for counts 1, 2, 4, 8, … of each type (the anchors); a
//! shard between two anchors' sizes searches the three fastest shapes of each, across the size ratios between
//! them. Mixes of two of the types on the homogeneous frontier are scored unless a lower bound shows they cannot
//! beat the homogeneous configuration their money buys. The `exhaustive` tests hold this against every count and
//! every mix, fully searched, on a small catalog.
//!
//! Work is shared: a design is priced once per shard size (entries and operations) whichever VM type, count or
//! provider asks ([`EvalMemo`]), a shard's whole design search once per provider (mixes ask for the same shard
//! again and again), the anchors' grids are priced in parallel up front, and the providers are searched side by
//! side.
//!
//! The continuum maps every cost to the fastest configuration at or below it, so more money never buys less;
//! per provider first, then across providers.

mod config;
mod ctx;
mod hardware;
mod provider;

pub use config::{
    best_within, frontier, margin_range, margin_split, Config, MarginRange, MarginSplit, Part,
};
pub use hardware::undominated;
pub use provider::{baseline_frontier, one_vm_designs, provider_configs, OneVm, REFIT_SHAPES};

use crate::continuum::hardware::{searched, warm_anchor_grids};
use crate::continuum::provider::{baseline_frontier_in, provider_configs_in};
use crate::designs::{Baseline, EvalMemo};
use cosine_cloud_pricing::{Catalog, Provider, Sla};
use cosine_cost_model::cpu::{CpuLibrary, PhiLibrary};
use cosine_cost_model::machine::ThroughputModel;
use cosine_design::{OperationMix, Workload};
use rayon::prelude::*;
use serde::Serialize;
use std::sync::atomic::AtomicUsize;
use std::sync::Arc;

/// What to search.
#[derive(Clone, Debug)]
pub struct SearchOptions {
    /// Monthly budget in USD.
    pub budget: f64,
    /// Provider ids to search.
    pub providers: Vec<String>,
    /// SLA add-ons to include.
    pub slas: Vec<Sla>,
    /// ε of the memory hopping.
    pub epsilon: f64,
    /// Endure's KL radius (replaces the noise).
    pub rho: Option<f64>,
    /// Cosine's workload noise ν (default 0.1).
    pub noise: f64,
    /// Most VMs in one configuration.
    pub max_vms: u32,
    /// Lowest and highest monthly cost considered.
    pub cost_range: (f64, f64),
    /// Counts configurations as they are scored (for a progress display).
    pub progress: Option<Arc<AtomicUsize>>,
    /// How a design's I/Os become time: within the machine's physical limits (the default), or the paper's
    /// Eq. 3.
    pub throughput: ThroughputModel,
    /// The CPU an operation costs per engine and operation type.
    pub cpu: CpuLibrary,
    /// Seconds a design's write buffer may take to recover at the volume's bandwidth (default 60).
    pub max_recovery_s: f64,
    /// Requests the engine keeps in flight on a VM (None: one per vCPU, as `cosine serve` answers point reads
    /// on one event-loop thread a core).
    pub in_flight: Option<f64>,
    /// A volume's read latency in seconds in place of the catalog's.
    pub read_latency_s: Option<f64>,
    /// The operating system's memory reserve (bytes, share of the VM's memory) in place of the catalog's.
    pub os_reserve: Option<(f64, f64)>,
    /// The engine's memory beyond its design (bytes, share of the design's memory), where the catalog does not
    /// give its own ([`ENGINE_OVERHEAD`]).
    pub engine_overhead: (f64, f64),
}

/// The engine's memory beyond its design's M: a fixed part in bytes and a share of M, measured by
/// `cosine profile` (resident memory less design memory at two design sizes) on this project's machine.
pub const ENGINE_OVERHEAD: (f64, f64) = cosine_cost_model::machine::ENGINE_OVERHEAD;

impl SearchOptions {
    /// Defaults for a budget: all providers, no SLAs, ε = 0.1, 10% noise, up to 32 VMs, $1 to $500,000 (widened
    /// when the budget lies outside).
    pub fn new(budget: f64) -> Self {
        let hi = if budget > 500_000.0 {
            budget + 500_000.0
        } else {
            500_000.0
        };
        SearchOptions {
            budget,
            providers: vec!["aws".into(), "gcp".into(), "azure".into()],
            slas: Vec::new(),
            epsilon: 0.1,
            rho: None,
            noise: 0.1,
            max_vms: 32,
            throughput: ThroughputModel::Physical,
            cpu: CpuLibrary::learned(),
            max_recovery_s: crate::designs::DEFAULT_MAX_RECOVERY_S,
            in_flight: None,
            read_latency_s: None,
            os_reserve: None,
            engine_overhead: ENGINE_OVERHEAD,
            cost_range: (1.0, hi),
            progress: None,
        }
    }
}

/// Cosine's 10% noise (MODEL.md §6.1 step 5, [R]): the given shares are scaled by (1 − ν) and ν is spread
/// equally over the operation types the workload does not have; when it has them all, ν moves from the most
/// frequent type to the others.
pub fn noisy_mix(mix: &OperationMix, nu: f64) -> OperationMix {
    if nu <= 0.0 {
        return *mix;
    }
    let mut a = mix.to_array();
    let zeros = a.iter().filter(|x| **x == 0.0).count();
    if zeros > 0 {
        for x in a.iter_mut() {
            *x = if *x == 0.0 {
                nu / zeros as f64
            } else {
                *x * (1.0 - nu)
            };
        }
    } else {
        let top = (0..6).max_by(|&i, &j| a[i].total_cmp(&a[j])).unwrap_or(0);
        let moved = a[top] * nu;
        a[top] -= moved;
        for (i, x) in a.iter_mut().enumerate() {
            if i != top {
                *x += moved / 5.0;
            }
        }
    }
    let s: f64 = a.iter().sum();
    OperationMix::from_array(a.map(|x| x / s))
}

/// Counters of one search.
#[derive(Clone, Copy, Debug, Default, Serialize)]
pub struct SearchCounts {
    /// Configurations priced and scored.
    pub configurations: usize,
    /// Designs scored (each configuration's search counts every design it weighed).
    pub designs: usize,
    /// Designs the I/O model priced: the others were shared between VM types of one memory size, counts and
    /// providers (the same design on a shard of the same size is priced once).
    pub evaluations: usize,
    /// VM types searched (after removing dominated ones).
    pub vm_types: usize,
}

/// The result of a search.
#[derive(Clone, Debug, Serialize)]
pub struct SearchResult {
    /// The fastest configuration within the budget.
    pub best: Option<Config>,
    /// The cheaper neighbour of `best` on the frontier.
    pub cheaper: Option<Config>,
    /// The faster neighbour (above the budget).
    pub faster: Option<Config>,
    /// The continuum across providers.
    pub frontier: Vec<Config>,
    /// Per provider.
    pub per_provider: Vec<(String, Vec<Config>)>,
    /// Counters.
    pub counts: SearchCounts,
    /// Each fixed system's continuum.
    pub baselines: Vec<(Baseline, Vec<Config>)>,
}

/// Runs the search.
pub fn search(
    catalog: &Catalog,
    workload: &Workload,
    phi: &PhiLibrary,
    opts: &SearchOptions,
) -> SearchResult {
    let mut counts = SearchCounts::default();
    let memo = EvalMemo::default();
    warm_anchor_grids(catalog, workload, phi, opts, &memo);
    // the providers side by side: one provider's serial stretches (between its chunks of mixes, its frontiers)
    // leave a core to another's work
    let providers: Vec<&Provider> = searched(catalog, opts).collect();
    let found: Vec<(String, Vec<Config>, SearchCounts)> = providers
        .par_iter()
        .map(|p| {
            let mut c = SearchCounts::default();
            let configs = provider_configs_in(catalog, p, workload, phi, opts, &mut c, &memo);
            (p.id.clone(), frontier(configs), c)
        })
        .collect();
    let mut per_provider = Vec::new();
    let mut all = Vec::new();
    for (id, f, c) in found {
        counts.configurations += c.configurations;
        counts.designs += c.designs;
        counts.vm_types += c.vm_types;
        all.extend(f.iter().cloned());
        per_provider.push((id, f));
    }
    let frontier = frontier(all);
    let i = frontier.partition_point(|c| c.monthly_usd() <= opts.budget);
    let best = i.checked_sub(1).map(|i| frontier[i].clone());
    let cheaper = i.checked_sub(2).map(|i| frontier[i].clone());
    let faster = frontier.get(i).cloned();
    let baselines = Baseline::ALL
        .iter()
        .map(|&b| {
            (
                b,
                baseline_frontier_in(catalog, workload, phi, opts, b, &memo),
            )
        })
        .collect();
    counts.evaluations = memo.priced();
    SearchResult {
        best,
        cheaper,
        faster,
        frontier,
        per_provider,
        counts,
        baselines,
    }
}

/// Shared handle for progress reporting (configurations scored so far).
pub type Progress = Arc<AtomicUsize>;

#[cfg(test)]
mod exhaustive;
#[cfg(test)]
mod tests;

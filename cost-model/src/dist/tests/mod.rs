//! The distribution-aware model's unit tests, by concept, with their shared designs and workloads.

mod lookup;
mod lsh;
mod properties;
mod reference;
mod residency;
mod shape;
mod write;

use super::lookup::{geometric, level_pass_uniform};
use super::residency::{cycle_phases, residency};
use super::shape::{build_tree, refilter};
use super::tree::scaled;
use super::write::mean_distinct;
use super::*;
use crate::keys::{distinct_after, exp_or_zero, KeySpace};
use crate::WorstCase;
use cosine_design::{Compaction, FilePicking, LogKind, RunStrategy};
use cosine_design::{KeyDistribution, OperationMix};
use proptest::prelude::*;

const N: u64 = 100_000_000;

fn workload(mix: OperationMix) -> Workload {
    let mut w = Workload::with_mix(mix);
    w.entries = N;
    w.key_bytes = 16;
    w.value_bytes = 112;
    w.scan_length = 1000;
    w
}

fn all_ops() -> OperationMix {
    OperationMix {
        lookup: 0.2,
        empty_lookup: 0.2,
        insert: 0.2,
        blind_update: 0.1,
        rmw: 0.1,
        scan: 0.2,
    }
}

/// A leveled/tiered LSM with fences for every block and `bits` filter bits per key.
/// `d` with fence memory to spare: every run its steady state holds keeps its fences in memory.
fn roomy(mut d: Design) -> Design {
    d.fence_bytes *= 2;
    d
}

fn lsm(t: u64, k: u64, z: u64, bits: f64) -> Design {
    let mut d = Design::rocksdb_like(64 << 20, (bits * N as f64 / 8.0) as u64, N * 37 / 32);
    d.size_ratio = t;
    d.hot_runs = k;
    d.cold_runs = z;
    d
}

fn eval(d: &Design, w: &Workload) -> IoCost {
    DistributionAware::new().evaluate(d, w).unwrap()
}

/// The model with some of the reference code's quirks.
fn eval_with(quirks: ReferenceQuirks, d: &Design, w: &Workload) -> IoCost {
    DistributionAware {
        quirks,
        ..Default::default()
    }
    .evaluate(d, w)
    .unwrap()
}

/// A write buffer and levels under uniform updates over `universe` keys (a closed key space: the store
/// stays the same size, every write an update).
fn updates_over(universe: u64) -> Workload {
    let mut w = workload(OperationMix {
        lookup: 0.5,
        blind_update: 0.5,
        ..OperationMix::default()
    });
    w.entries = universe;
    w.writes = KeyDistribution::Uniform {
        universe: Some(universe),
    };
    w.reads = w.writes.clone();
    w
}

/// YCSB-A as `cosine validate` prices it at 30,000 records after 300,000 writes (23-byte keys, 1,000-byte
/// values, zipfian ranks drawn over 10^10 items and hashed onto the records), and the search's LSH design
/// for it at 1 MiB (its size ratio left to the caller).
fn validated_lsh() -> (Workload, Design) {
    let mut w = updates_over(30_000);
    w.key_bytes = 23;
    w.value_bytes = 1000;
    w.writes = KeyDistribution::Zipfian {
        theta: 0.99,
        universe: Some(30_000),
        items: Some(10_000_000_000),
    };
    w.reads = w.writes.clone();
    w.operations = 600_000;
    let mut d = Design::lsh_like(652_576, 396_000);
    d.block_bytes = 4096;
    (w, d)
}

/// YCSB-A over `records` keys after `writes` updates, as `cosine validate` prices it, and the hybrid
/// design of filters over a tiered cold level (K = 1, Z = T − 1, full compaction on the first two
/// levels) that the search picks for it, with `buffer`, `filters` and `fences` bytes.
fn validated_hybrid(
    records: u64,
    writes: u64,
    t: u64,
    buffer: u64,
    filters: u64,
    fences: u64,
) -> (Workload, Design) {
    let (mut w, _) = validated_lsh();
    w.entries = records;
    w.writes = KeyDistribution::Zipfian {
        theta: 0.99,
        universe: Some(records),
        items: Some(10_000_000_000),
    };
    w.reads = w.writes.clone();
    w.operations = 2 * writes;
    let mut d = Design::rocksdb_like(buffer, filters, fences);
    d.block_bytes = 4096;
    d.size_ratio = t;
    d.hot_runs = 1;
    d.cold_runs = t - 1;
    d.compaction = Compaction::Hybrid;
    d.full_compaction_levels = 2;
    (w, d)
}

/// Per level above the last, the share of the flushes of the planner's simulation under `w`'s writes
/// after which it held 0, 1, .. runs (the simulation `evaluate` prices `d` over).
fn simulated_run_counts(d: &Design, w: &Workload) -> Vec<Vec<f64>> {
    let model = DistributionAware::new();
    let keys = KeySpace::from_workload(w);
    let shape = data_shape(d, w, &keys, &model.quirks);
    let met = model.met_tree(d, w, &shape, &keys.parts_cow());
    met.under_writes
        .expect("the simulation runs")
        .run_counts
        .clone()
}

fn explain_with(quirks: ReferenceQuirks, d: &Design, w: &Workload) -> Vec<ModelLevel> {
    DistributionAware {
        quirks,
        ..Default::default()
    }
    .explain(d, w)
    .unwrap()
    .expect("a tree-shaped design")
}

/// An unclassified design with no filters and T above any block's entries (the engine's rule makes it a
/// hash log): 512 MiB of buffer, 1 GiB of fences.
fn lsh_test_design() -> Design {
    let mut d = Design::rocksdb_like(512 << 20, 0, 1 << 30);
    d.size_ratio = 1000;
    d.hot_runs = 999;
    d.cold_runs = 999;
    d.class = None;
    d
}

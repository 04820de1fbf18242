//! Work shared by every shard of one search: model evaluations by design and shard size, the priced ε grids,
//! the key spaces, and a striped counter.

use crate::designs::price::Choices;
use cosine_cost_model::dist::LshEngine;
use cosine_cost_model::keys::KeySpace;
use cosine_cost_model::requests::OpIo;
use cosine_cost_model::ReferenceQuirks;
use cosine_design::{Design, DesignClass, Workload};
use parking_lot::Mutex;
use rustc_hash::FxHashMap;
use std::hash::{BuildHasher, Hash};
use std::sync::{Arc, OnceLock};

/// Model evaluations shared by every shard of one search over one workload: the same design on a shard of the
/// same size (entries and operations) is priced once, whichever VM type, count or provider asked. The I/O model
/// depends on neither a VM's cores nor its IOPS, so this changes no result; it only spares repeated work, since
/// many VM types share a memory size. Also shares the key space of each shard size.
#[derive(Debug, Default)]
pub struct EvalMemo {
    pub(super) costs: [Mutex<FxHashMap<EvalKey, Option<Priced>>>; MEMO_SHARDS],
    pub(super) keys: Mutex<FxHashMap<u64, Arc<KeySpace>>>,
    pub(super) grids: Mutex<FxHashMap<GridKey, Arc<OnceLock<Arc<Grid>>>>>,
    pub(super) priced: Tally,
}

/// A count that the search's threads add to without sharing a cache line (one padded stripe per rayon worker,
/// one for any other thread), summed when read: the search counts every design it scores and prices, a few
/// million additions a search, which on one shared counter cost about 2% of its time in cache-line transfers.
#[derive(Debug, Default)]
pub struct Tally([Stripe; TALLY_STRIPES]);

#[derive(Debug, Default)]
#[repr(align(128))]
pub(super) struct Stripe(std::sync::atomic::AtomicUsize);

pub(super) const TALLY_STRIPES: usize = 8;

impl Tally {
    /// Adds `n`.
    pub fn add(&self, n: usize) {
        let i = rayon::current_thread_index().map_or(0, |i| i + 1) % TALLY_STRIPES;
        self.0[i]
            .0
            .fetch_add(n, std::sync::atomic::Ordering::Relaxed);
    }

    /// The count so far.
    pub fn get(&self) -> usize {
        self.0
            .iter()
            .map(|s| s.0.load(std::sync::atomic::Ordering::Relaxed))
            .sum()
    }
}

/// A design priced by the I/O model: its I/Os per operation (the KL worst case with ρ), what they ask of a
/// volume, the class the model derives and the algorithmic choices it runs with.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(super) struct Priced {
    pub(super) io: f64,
    pub(super) requests: OpIo,
    pub(super) class: DesignClass,
    pub(super) choices: Choices,
}

/// A shard's ε grid priced: per shape, per buffer share, the I/Os per operation, the class and the choices
/// (None where the model rejects the design). What the latency ranking needs, without a VM's cores and IOPS.
pub(super) type Grid = Vec<Vec<Option<Priced>>>;

/// What a shard's grid depends on: its size, memory, buffer ceiling and block, and the search's quirks, ε and ρ.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub(super) struct GridKey {
    pub(super) entries: u64,
    pub(super) operations: u64,
    pub(super) operations_before: u64,
    pub(super) memory_bytes: u64,
    /// The largest buffer the grid's shares are of (the memory, or less where recovery bounds it).
    pub(super) buffer_ceiling: u64,
    pub(super) block_bytes: u64,
    pub(super) quirks: ReferenceQuirks,
    pub(super) lsh_engine: LshEngine,
    pub(super) epsilon: u64,
    pub(super) rho: Option<u64>,
    /// The machine's page cache for the engine's files (bits), which the requests' cached share depends on.
    pub(super) page_cache: u64,
}

pub(super) const MEMO_SHARDS: usize = 16;

/// What an evaluation depends on besides the (fixed) workload: the shard's size, the quirks, every design field
/// and the engine that runs an LSH design (FASTER's baseline shares our LSH design's numbers but not its
/// engine), floats by their bits, the algorithmic choices and the engine packed in one word. Hashed by its
/// numbers only (the quirks, when a caller sets any, come with numbers of their own).
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) struct EvalKey {
    pub(super) numbers: [u64; 18],
    pub(super) quirks: ReferenceQuirks,
}

impl Hash for EvalKey {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        self.numbers.hash(state);
    }
}

impl EvalKey {
    pub(super) fn new(
        d: &Design,
        w: &Workload,
        quirks: ReferenceQuirks,
        lsh_engine: LshEngine,
        page_cache_bytes: f64,
    ) -> Self {
        let kinds = (d.filter_granularity as u64)
            | (d.compaction as u64) << 8
            | (d.run_strategy as u64) << 16
            | (d.file_picking as u64) << 24
            | (d.log as u64) << 32
            | d.class.map_or(0, |c| c as u64 + 1) << 40
            | (lsh_engine as u64) << 48;
        EvalKey {
            numbers: [
                w.entries,
                w.operations,
                w.operations_before,
                kinds,
                d.size_ratio,
                d.hot_runs,
                d.cold_runs,
                d.block_bytes,
                d.buffer_bytes,
                d.filter_bytes,
                d.fence_bytes,
                d.cache_bytes,
                d.merge_threshold.to_bits(),
                u64::from(d.full_compaction_levels),
                u64::from(d.threads),
                d.file_bytes,
                d.mutable_fraction.to_bits(),
                page_cache_bytes.to_bits(),
            ],
            quirks,
        }
    }
}

impl EvalMemo {
    /// The key space of the workload resized to `w.entries` (built once per size).
    pub fn keys(&self, w: &Workload) -> Arc<KeySpace> {
        if let Some(k) = self.keys.lock().get(&w.entries) {
            return k.clone();
        }
        let k = Arc::new(KeySpace::from_workload(w));
        self.keys.lock().entry(w.entries).or_insert(k).clone()
    }

    /// Designs the I/O model has priced for this memo.
    pub fn priced(&self) -> usize {
        self.priced.get()
    }

    /// The grid for `key`, priced by `compute` once: a caller asking while another prices it waits for it.
    pub(super) fn grid(&self, key: GridKey, compute: impl FnOnce() -> Grid) -> Arc<Grid> {
        let cell = self.grids.lock().entry(key).or_default().clone();
        cell.get_or_init(|| Arc::new(compute())).clone()
    }

    pub(super) fn cost(
        &self,
        key: EvalKey,
        compute: impl FnOnce() -> Option<Priced>,
    ) -> Option<Priced> {
        let h = rustc_hash::FxBuildHasher.hash_one(&key);
        // bits 52-55 pick the shard: the map inside uses the low ones for the bucket and the top seven for the
        // tag it compares before the key (shards picked by the top bits left it three bits of tag), and FxHash's
        // final rotation leaves its best-mixed bits up here
        let shard = &self.costs[(h >> 52) as usize % MEMO_SHARDS];
        if let Some(c) = shard.lock().get(&key) {
            return *c;
        }
        let c = compute();
        shard.lock().insert(key, c);
        c
    }
}

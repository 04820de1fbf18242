//! Cosine's log-structured hash table on a shard: its size ratio from the data, the divisors and last-level
//! layouts searched.

use crate::designs::shapes::{base_design, with_class_defaults};
use crate::designs::{Scored, Shard};
use cosine_cost_model::layout::{self};
use cosine_design::{Design, DesignClass};

/// The divisors of the LSH design's size ratio searched ([`Shard::lsh_design_at`]): T₀ (the first level never
/// fills) down to T₀/8 (the log merged eight times as often).
pub const LSH_DIVISORS: [u64; 4] = [1, 2, 4, 8];

/// The LSH layouts searched: each divisor of T₀ with its last level tiered, and below T₀ with one run (one
/// run at the last level only below T₀: at T₀ the data sits at the edge of the first level's capacity, and
/// whether the engine then merges every flush into one run or pushes the first level down depends on a few
/// bytes a file).
pub(super) fn lsh_layouts() -> impl Iterator<Item = (u64, bool)> {
    LSH_DIVISORS
        .into_iter()
        .flat_map(|div| [(div, true), (div, false)])
        .filter(|&(div, tiered)| tiered || div > 1)
}

impl Shard<'_> {
    /// Cosine's LSH design: our engine's hash index (one entry per key) in M_FP, the rest buffer, T so large
    /// that the first level never fills, every level tiered ([`Shard::lsh_design_at`] with divisor 1).
    pub fn lsh_design(&self) -> Option<Design> {
        self.lsh_design_at(1, true)
    }

    /// Cosine's LSH design with its size ratio divided by `divisor`: T = ⌈T₀/divisor⌉ (at least 3), T₀ the
    /// ratio at which the first level never fills (T₀ flushes of M_B/2 exceed the data), at least a block's
    /// entries plus one. A smaller T merges the log's runs more often (more writes) and keeps fewer of them
    /// (fewer runs whose hash indexes go cold: under updates the runs hold versions, and T₀ runs of them
    /// outgrow M_FP). K = T − 1 runs on the levels above the last; the last keeps Z = T − 1 runs when `tiered`
    /// (the newest pushes above the merged run: cheaper writes, more runs a lookup may pass), else Z = 1, one
    /// run each push (or, while the data fits the first level, each flush) merges into. The planner gives Z to
    /// the levels whose hash indexes M_FP does not hold too; the model prices those between the first and the
    /// last as holding K runs (`LshAges`).
    pub fn lsh_design_at(&self, divisor: u64, tiered: bool) -> Option<Design> {
        let shape = self.shape();
        let m_fp =
            layout::engine_hash_index_bytes(shape.entries, shape.entries_per_block).ceil() as u64;
        if m_fp >= self.memory_bytes {
            return None;
        }
        // the rest is buffer, up to what recovers in time (the rest of memory unused: the entry cache may take
        // it, [`Shard::with_cache`])
        let m_b = (self.memory_bytes - m_fp).min(self.buffer_ceiling());
        // the first level never fills: its runs, flushes of M_B/2, hold the data, each flush the entries the
        // engine's hash-log buffer holds when full (what it charges an entry: its allocations and its table's
        // share, more than its key and value, so a level of T flushes' bytes holds the data's run files too)
        let flush = (m_b / cosine_design::Design::WRITE_BUFFERS).max(1);
        let w = &self.workload;
        let eb = cosine_design::shape::hash_log_flush_entries(
            flush as usize,
            w.key_bytes as usize,
            w.value_bytes as usize,
        )
        .max(1);
        // (a level holds T − 1 runs: T₀ − 1 flushes hold the data)
        let t0 = ((shape.entries / eb as f64).ceil() as u64 + 1).max(2);
        // (and above a block's entries: a log's first level that holds at least as many runs as a block holds
        // entries; what a hash log's size ratio has always been, which an insert-heavy workload's few flushes
        // never fill)
        let t0 = t0.max(shape.entries_per_block as u64 + 1);
        // (T ≥ 3: with T = 2 a level holds one run, K = 1, and the log's layout is a leveled tree's)
        let t = t0.div_ceil(divisor.max(1)).max(3);
        let z = if tiered { t - 1 } else { 1 };
        // the class recorded: without it the engine (and so the model) would take a T at or below the entries
        // of ASSUMED_ENTRY_BYTES a block for a B-tree's fanout, and price T − 1 unfiltered runs a level
        Some(with_class_defaults(
            base_design(t, t - 1, z, self.block_bytes, m_b, 0, m_fp),
            DesignClass::Lsh,
        ))
    }

    /// Cosine's LSH design at the fastest of the [`LSH_DIVISORS`] of its size ratio, its last level tiered or
    /// one run, with the divisor and the choice.
    pub fn best_lsh(&self) -> Option<((u64, bool), Scored)> {
        self.best_lsh_with(|_| {})
    }

    /// [`Shard::best_lsh`] over the designs `adjust` changes (a log kind other than the class default).
    pub(super) fn best_lsh_with(
        &self,
        adjust: impl Fn(&mut Design),
    ) -> Option<((u64, bool), Scored)> {
        lsh_layouts()
            .filter_map(|(div, tiered)| {
                let mut d = self.lsh_design_at(div, tiered)?;
                adjust(&mut d);
                Some(((div, tiered), self.score(d)?))
            })
            .min_by(|a, b| a.1.latency_s.total_cmp(&b.1.latency_s))
    }
}

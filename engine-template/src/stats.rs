//! What `Engine::stats` reports.

use cosine_design::Design;
use cosine_levels::LevelSnapshot;

/// One level's shape and counters.
#[derive(Clone, Debug, PartialEq)]
pub struct LevelStats {
    /// Level number (1 = just below the buffer).
    pub level: usize,
    /// Runs.
    pub runs: usize,
    /// Files.
    pub files: usize,
    /// Bytes on disk.
    pub bytes: u64,
    /// Entries (versions).
    pub entries: u64,
    /// Whether the level is hot: at least its newest run keeps its fences (and filters) in memory.
    pub hot: bool,
    /// Runs, newest first, whose fences and filters (or, in a hash-indexed design, hash index) are in memory:
    /// all of them on a level M_FP covers.
    pub resident_runs: usize,
    /// Block reads and writes, index reads, filter probes and false positives.
    pub io: LevelSnapshot,
}

/// Memory held by the engine's structures, in heap bytes, next to the design's budget for each.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MemoryStats {
    /// Write buffers (active and frozen) and the hybrid log's read-only region: their entries, keys, values
    /// and indexes, as malloc hands them out.
    pub buffer_bytes: usize,
    /// Bloom filters: bit arrays and each filter's fixed overhead.
    pub filter_bytes: usize,
    /// Fence pointers, top indexes and hash indexes.
    pub fence_bytes: usize,
    /// The entry cache: its entries' keys, values and per-entry overhead.
    pub cache_bytes: usize,
    /// The design's M_B (both write buffers together).
    pub buffer_budget_bytes: u64,
    /// The design's M_BF.
    pub filter_budget_bytes: u64,
    /// The design's M_FP.
    pub fence_budget_bytes: u64,
    /// The design's M_BC.
    pub cache_budget_bytes: u64,
    /// The design's M_B + M_BF + M_FP + M_BC.
    pub budget_bytes: u64,
}

/// A snapshot of the engine's counters and shape.
#[derive(Clone, Debug, PartialEq)]
pub struct Stats {
    /// Per level.
    pub levels: Vec<LevelStats>,
    /// Bytes written by flushes.
    pub bytes_flushed: u64,
    /// Bytes read by compactions.
    pub bytes_compacted_read: u64,
    /// Bytes written by compactions.
    pub bytes_compacted_written: u64,
    /// Key ranges compactions merged on threads of their own beside the first (`Design.threads`).
    pub subcompactions: u64,
    /// Key and value bytes written by users.
    pub user_bytes_written: u64,
    /// (flushed + compacted) / user bytes.
    pub write_amplification: f64,
    /// Bytes on disk / bytes of the deepest level.
    pub space_amplification: f64,
    /// Bytes on disk.
    pub disk_bytes: u64,
    /// Memory.
    pub memory: MemoryStats,
    /// The entry cache's hits, misses and fills (all 0 without one).
    pub cache: cosine_cache::CacheStats,
    /// The design the directory had before this open, if it differed.
    pub adapted_from: Option<Design>,
}

impl Stats {
    /// Total data-block reads by lookups and scans.
    pub fn block_reads(&self) -> u64 {
        self.levels.iter().map(|l| l.io.block_reads).sum()
    }
    /// Total index-block reads.
    pub fn index_reads(&self) -> u64 {
        self.levels.iter().map(|l| l.io.index_reads).sum()
    }
    /// Total filter probes.
    pub fn filter_probes(&self) -> u64 {
        self.levels.iter().map(|l| l.io.filter_probes).sum()
    }
    /// Total false positives.
    pub fn false_positives(&self) -> u64 {
        self.levels.iter().map(|l| l.io.false_positives).sum()
    }
}

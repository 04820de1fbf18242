//! `Design`: the layout and algorithmic primitives of Cosine Table 1, and the design classes of Algorithm 3.

use crate::error::{DesignError, Result};
use serde::{Deserialize, Serialize};

/// Largest key the engine template accepts (Cosine Table 1): 64 KiB.
pub const MAX_KEY_BYTES: u64 = 64 * 1024;
/// Largest value the engine template accepts (Cosine Table 1): 1 GiB.
pub const MAX_VALUE_BYTES: u64 = 1024 * 1024 * 1024;

/// The four design classes of Cosine Algorithm 3.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize, PartialOrd, Ord)]
#[serde(rename_all = "snake_case")]
pub enum DesignClass {
    /// Filters on, every level hot (fence pointers and filters in memory).
    Lsm,
    /// No filters, fanout T not above the entries per block: cold levels reached through on-disk fences.
    Btree,
    /// No filters, T so large that the first level never fills: a log-structured hash table.
    Lsh,
    /// Filters on the hot levels over cold, B-tree-like levels (Table 1's "new design").
    Hybrid,
}

impl DesignClass {
    /// Algorithm 3: the class from filter memory, the number of cold levels Y, T and the entries per block.
    pub const fn classify(
        filter_bytes: u64,
        cold_levels: u32,
        size_ratio: u64,
        entries_per_block: u64,
    ) -> Self {
        if filter_bytes != 0 {
            if cold_levels > 0 {
                DesignClass::Hybrid
            } else {
                DesignClass::Lsm
            }
        } else if size_ratio > entries_per_block {
            DesignClass::Lsh
        } else {
            DesignClass::Btree
        }
    }

    /// The lower-case name used in JSON and on the command line.
    pub fn as_str(self) -> &'static str {
        match self {
            DesignClass::Lsm => "lsm",
            DesignClass::Btree => "btree",
            DesignClass::Lsh => "lsh",
            DesignClass::Hybrid => "hybrid",
        }
    }

    /// All four classes, in Algorithm 3's order.
    pub const ALL: [DesignClass; 4] = [
        DesignClass::Lsm,
        DesignClass::Btree,
        DesignClass::Lsh,
        DesignClass::Hybrid,
    ];
}

impl std::fmt::Display for DesignClass {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Where Bloom filters are cut (Table 1: block, file or run).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FilterGranularity {
    /// One filter per data block.
    Block,
    /// One filter per file (RocksDB's default).
    File,
    /// One filter per sorted run.
    Run,
}

/// How a full level is merged into the next (Table 1).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Compaction {
    /// Whole level into the next level.
    Full,
    /// One file at a time into the overlapping files below.
    Partial,
    /// Full on the first `full_compaction_levels` levels, partial below.
    Hybrid,
}

impl Compaction {
    /// Whether level `level` (1-based) is merged down whole rather than file by file, with hybrid compaction
    /// full on its first `full_levels` levels. The engine's planner and the cost model both decide by it.
    pub fn merges_whole(self, level: usize, full_levels: usize) -> bool {
        match self {
            Compaction::Full => true,
            Compaction::Partial => false,
            Compaction::Hybrid => level <= full_levels,
        }
    }
}

/// Which run of a level a compaction starts from (Table 1).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RunStrategy {
    /// The first (oldest) run.
    First,
    /// The last run that is full.
    LastFull,
    /// The run with the highest size / capacity.
    Fullest,
    /// No run choice (B-tree-like layouts have one run per level).
    None,
}

/// Which file a partial compaction moves down (Table 1).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FilePicking {
    /// The oldest file.
    Oldest,
    /// The file with the smallest key span (dense fence pointers).
    DenseFp,
    /// The file with the largest key span (sparse fence pointers).
    SparseFp,
    /// The first file in key order.
    ChooseFirst,
}

/// The log kind of an LSH-class (FASTER-like) design.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum LogKind {
    /// An append-only log (the authors' code: Z = 0).
    AppendOnly,
    /// FASTER's hybrid log: a mutable in-memory tail, a read-only region, then disk (the code: Z = −1).
    Hybrid,
}

/// One storage-engine design: Cosine Table 1's layout primitives (T, K, Z, block size, M_B, M_BF, M_FP)
/// and algorithmic primitives, plus the class derived by Algorithm 3.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(try_from = "DesignRepr", into = "DesignOut")]
pub struct Design {
    /// T: size ratio between consecutive levels (fanout for B-tree-like designs).
    pub size_ratio: u64,
    /// K: runs allowed per hot level (1 = leveling, T−1 = tiering).
    pub hot_runs: u64,
    /// Z: runs allowed per cold level and at the largest level.
    pub cold_runs: u64,
    /// I/O block (page) size in bytes.
    pub block_bytes: u64,
    /// M_B: write-buffer memory in bytes.
    pub buffer_bytes: u64,
    /// M_BF: Bloom-filter memory in bytes (0 = no filters).
    pub filter_bytes: u64,
    /// M_FP: fence-pointer (or hash-index) memory in bytes.
    pub fence_bytes: u64,
    /// M_BC: memory of the entry cache in bytes (0 = none): the values of recently read keys, filled by
    /// lookups and dropped by writes to their keys (MODEL.md §2.1, level −1). Each cached entry costs its key,
    /// its value and [`CACHE_ENTRY_OVERHEAD_BYTES`].
    pub cache_bytes: u64,
    /// Where filters are cut.
    pub filter_granularity: FilterGranularity,
    /// Compaction kind.
    pub compaction: Compaction,
    /// Which run a compaction starts from.
    pub run_strategy: RunStrategy,
    /// Which file a partial compaction picks.
    pub file_picking: FilePicking,
    /// Fraction of a level's capacity at which it is merged, in (0, 1].
    pub merge_threshold: f64,
    /// With hybrid compaction: how many top levels use full compaction.
    pub full_compaction_levels: u32,
    /// Worker threads (η); 0 means one per core.
    pub threads: u32,
    /// Target file size in bytes for partial compaction.
    pub file_bytes: u64,
    /// Log kind; meaningful for the LSH class only.
    pub log: LogKind,
    /// With FASTER's hybrid log ([`LogKind::Hybrid`], LSH class only): the share of M_B that is the log's
    /// mutable region (the write buffer that takes updates in place, flushed when full); the rest of M_B keeps
    /// the newest flushed records in memory as the read-only region. In (0, 1/2]: a flush needs the mutable
    /// region's bytes twice (the frozen region being written and the next one filling). Default 1/2.
    pub mutable_fraction: f64,
    /// The class this design was derived as (Algorithm 3), when known.
    pub class: Option<DesignClass>,
}

/// The hybrid log's default mutable share of M_B ([`Design::mutable_fraction`]): the write buffer's usual
/// M_B / [`Design::WRITE_BUFFERS`].
pub const DEFAULT_MUTABLE_FRACTION: f64 = 0.5;

/// Entry size Algorithm 3 assumes for a design that does not record its class (the engine opening a directory
/// does not know the data's entry size).
pub const ASSUMED_ENTRY_BYTES: u64 = 128;

/// Bytes the entry cache spends on each entry beside its key and value (its table slot, the value's buffer
/// header and the eviction state): the engine charges them against M_BC and the cost model counts an entry of
/// the cache as `entry bytes + CACHE_ENTRY_OVERHEAD_BYTES`, so both hold the same number of entries. Measured
/// (cosine-cache's `tests/heap.rs`, a counting allocator): a full cache of 16-byte keys and 100-byte values
/// took 113 heap bytes an entry beside them, 1.27× what a 64-byte overhead counted; 128 covers that and
/// glibc's headers on the key's and the value's blocks.
pub const CACHE_ENTRY_OVERHEAD_BYTES: u64 = 128;

impl Design {
    /// Whether the engine runs this design as a log-structured hash table (hash-indexed log buffer, a hash
    /// index per file, no filters): its recorded class, else Algorithm 3 (no filters and T above the entries
    /// per block) with [`ASSUMED_ENTRY_BYTES`]-byte entries. The engine and the cost model both decide by this
    /// rule, so a design is priced as the shape it runs as.
    /// A `const fn`, so that a generated engine picks its parts at compile time.
    pub const fn runs_as_lsh(&self) -> bool {
        let class = match self.class {
            Some(c) => c,
            None => {
                let per_block = self.block_bytes / ASSUMED_ENTRY_BYTES;
                DesignClass::classify(
                    self.filter_bytes,
                    0,
                    self.size_ratio,
                    if per_block == 0 { 1 } else { per_block },
                )
            }
        };
        matches!(class, DesignClass::Lsh)
    }

    /// A RocksDB-like leveled LSM-tree (T = 10, K = Z = 1, 10 bits per key, filters per file).
    pub fn rocksdb_like(buffer_bytes: u64, filter_bytes: u64, fence_bytes: u64) -> Self {
        Design {
            size_ratio: 10,
            hot_runs: 1,
            cold_runs: 1,
            block_bytes: 4096,
            buffer_bytes,
            filter_bytes,
            fence_bytes,
            cache_bytes: 0,
            filter_granularity: FilterGranularity::File,
            compaction: Compaction::Full,
            run_strategy: RunStrategy::First,
            file_picking: FilePicking::DenseFp,
            merge_threshold: 1.0,
            full_compaction_levels: 2,
            threads: 0,
            file_bytes: 64 << 20,
            log: LogKind::Hybrid,
            mutable_fraction: DEFAULT_MUTABLE_FRACTION,
            class: Some(DesignClass::Lsm),
        }
    }

    /// A log-structured hash table like FASTER's, as our engine runs it: hash-indexed runs that are appended,
    /// never merged (T = 1000, K = Z = 999), no filters (the hash index answers membership), the index within
    /// `fence_bytes`.
    pub fn lsh_like(buffer_bytes: u64, fence_bytes: u64) -> Self {
        Design {
            size_ratio: 1000,
            hot_runs: 999,
            cold_runs: 999,
            filter_granularity: FilterGranularity::Run,
            class: Some(DesignClass::Lsh),
            ..Design::rocksdb_like(buffer_bytes, 0, fence_bytes)
        }
    }

    /// A hybrid: tiered levels (T − 1 runs each) above a leveled last level (one run), compacted in the
    /// hybrid manner (the top levels whole, the rest file by file), merging the fullest level's runs.
    pub fn hybrid(size_ratio: u64, buffer_bytes: u64, filter_bytes: u64, fence_bytes: u64) -> Self {
        Design {
            size_ratio,
            hot_runs: size_ratio.saturating_sub(1).max(1),
            cold_runs: 1,
            compaction: Compaction::Hybrid,
            run_strategy: RunStrategy::Fullest,
            class: Some(DesignClass::Hybrid),
            ..Design::rocksdb_like(buffer_bytes, filter_bytes, fence_bytes)
        }
    }

    /// A WiredTiger-like B-tree layout (T = 32, no filters, cold levels through on-disk fences).
    pub fn wiredtiger_like(buffer_bytes: u64, fence_bytes: u64) -> Self {
        Design {
            size_ratio: 32,
            hot_runs: 1,
            cold_runs: 1,
            block_bytes: 32 * 1024,
            buffer_bytes,
            filter_bytes: 0,
            fence_bytes,
            cache_bytes: 0,
            filter_granularity: FilterGranularity::File,
            compaction: Compaction::Partial,
            run_strategy: RunStrategy::None,
            file_picking: FilePicking::ChooseFirst,
            merge_threshold: 0.5,
            full_compaction_levels: 0,
            threads: 0,
            file_bytes: 1 << 20,
            log: LogKind::Hybrid,
            mutable_fraction: DEFAULT_MUTABLE_FRACTION,
            class: Some(DesignClass::Btree),
        }
    }

    /// A tiered LSM-tree (K = Z = T − 1).
    pub fn tiered(size_ratio: u64, buffer_bytes: u64, filter_bytes: u64, fence_bytes: u64) -> Self {
        Design {
            size_ratio,
            hot_runs: size_ratio - 1,
            cold_runs: size_ratio - 1,
            run_strategy: RunStrategy::Fullest,
            ..Design::rocksdb_like(buffer_bytes, filter_bytes, fence_bytes)
        }
    }

    /// Write buffers that share M_B: the active one, taking writes, and one frozen one being flushed (as
    /// RocksDB's `write_buffer_size` × `max_write_buffer_number`), so writes go on during a flush and the
    /// two together never hold more than M_B.
    pub const WRITE_BUFFERS: u64 = 2;

    /// Bytes of memory one write buffer may hold before it is frozen and flushed, M_B / 2 (the mutable region,
    /// [`Design::mutable_fraction`] of M_B, for an LSH design with the hybrid log): the size of a flush and
    /// the base of the tree's level capacities (M_B/2 · T^i), for the engine and the cost model alike.
    pub fn flush_bytes(&self) -> u64 {
        if self.has_read_only_region() {
            ((self.buffer_bytes as f64 * self.mutable_fraction) as u64).max(1)
        } else {
            (self.buffer_bytes / Self::WRITE_BUFFERS).max(1)
        }
    }

    /// Whether the design keeps FASTER's read-only region: an LSH design ([`Design::runs_as_lsh`]) with the
    /// hybrid log. Its newest flushed records stay in memory, within the M_B the mutable region leaves
    /// ([`Design::read_only_bytes`]), and answer lookups without I/O; an append-only log drops a buffer once
    /// it is flushed.
    pub const fn has_read_only_region(&self) -> bool {
        matches!(self.log, LogKind::Hybrid) && self.runs_as_lsh()
    }

    /// Bytes of the hybrid log's read-only region: M_B less the mutable region's ([`Design::flush_bytes`]);
    /// while a frozen mutable region is being flushed, the read-only region gives up its bytes (0 without a
    /// read-only region).
    pub fn read_only_bytes(&self) -> u64 {
        if self.has_read_only_region() {
            self.buffer_bytes.saturating_sub(self.flush_bytes())
        } else {
            0
        }
    }

    /// Bytes a level is pushed down at, per T^i of its capacity: a flush's bytes times the merge threshold θ
    /// (level i is merged down once it holds θ·(M_B/2)·T^i). The tree's depth is counted over this base, by
    /// the engine (for Monkey's bits) and the cost model alike ([`crate::shape::level_count`]).
    pub fn level_base_bytes(&self) -> f64 {
        self.flush_bytes() as f64 * self.merge_threshold.clamp(0.01, 1.0)
    }

    /// Whether this design merges level `level` (1-based) down whole ([`Compaction::merges_whole`]).
    pub fn merges_whole(&self, level: u32) -> bool {
        self.compaction
            .merges_whole(level as usize, self.full_compaction_levels as usize)
    }

    /// Total memory the design asks for: M_B + M_BF + M_FP + M_BC.
    pub fn memory_bytes(&self) -> u64 {
        self.buffer_bytes
            .saturating_add(self.filter_bytes)
            .saturating_add(self.fence_bytes)
            .saturating_add(self.cache_bytes)
    }

    /// Checks every primitive against the ranges of Cosine Table 1 and the recorded class against Algorithm 3
    /// (as far as it can be checked without knowing the data size).
    pub fn validate(&self) -> Result<()> {
        if self.size_ratio < 2 {
            return Err(DesignError::SizeRatio(self.size_ratio));
        }
        let max = self.size_ratio - 1;
        for (name, value) in [
            ("hot_runs (K)", self.hot_runs),
            ("cold_runs (Z)", self.cold_runs),
        ] {
            if value == 0 || value > max {
                return Err(DesignError::RunsPerLevel { name, value, max });
            }
        }
        if self.block_bytes == 0 {
            return Err(DesignError::Zero("block_bytes"));
        }
        if self.buffer_bytes == 0 {
            return Err(DesignError::Zero("buffer_bytes"));
        }
        if !(self.merge_threshold > 0.0 && self.merge_threshold <= 1.0) {
            return Err(DesignError::OutOfRange {
                field: "merge_threshold",
                value: self.merge_threshold.to_string(),
                reason: "must be in (0, 1]",
            });
        }
        if self.file_bytes == 0 {
            return Err(DesignError::Zero("file_bytes"));
        }
        if !(self.mutable_fraction > 0.0 && self.mutable_fraction <= 0.5) {
            return Err(DesignError::OutOfRange {
                field: "mutable_fraction",
                value: self.mutable_fraction.to_string(),
                reason: "must be in (0, 0.5]: a flush holds the frozen mutable region beside the next one",
            });
        }
        if let Some(class) = self.class {
            let reason = match class {
                DesignClass::Lsm | DesignClass::Hybrid if self.filter_bytes == 0 => {
                    Some("lsm and hybrid designs have filter memory (M_BF > 0)".to_string())
                }
                DesignClass::Btree | DesignClass::Lsh if self.filter_bytes != 0 => {
                    Some("btree and lsh designs have no filter memory (M_BF = 0)".to_string())
                }
                _ => None,
            };
            if let Some(reason) = reason {
                return Err(DesignError::ClassMismatch {
                    recorded: class.to_string(),
                    reason,
                });
            }
        }
        Ok(())
    }

    /// Parses and validates a design.json document.
    pub fn from_json(text: &str) -> Result<Self> {
        let repr: DesignRepr = serde_json::from_str(text).map_err(|e| DesignError::Malformed {
            what: "design",
            message: e.to_string(),
        })?;
        Design::try_from(repr)
    }

    /// Pretty JSON for design.json.
    pub fn to_json(&self) -> String {
        serde_json::to_string_pretty(self).unwrap_or_default()
    }
}

fn default_granularity() -> FilterGranularity {
    FilterGranularity::File
}
fn default_compaction() -> Compaction {
    Compaction::Full
}
fn default_run_strategy() -> RunStrategy {
    RunStrategy::First
}
fn default_file_picking() -> FilePicking {
    FilePicking::DenseFp
}
fn default_merge_threshold() -> f64 {
    1.0
}
fn default_full_levels() -> u32 {
    2
}
fn default_file_bytes() -> f64 {
    (1u64 << 20) as f64
}
fn default_block_bytes() -> f64 {
    4096.0
}
fn default_log() -> LogKind {
    LogKind::Hybrid
}
fn default_mutable_fraction() -> f64 {
    DEFAULT_MUTABLE_FRACTION
}
fn is_default_fraction(f: &f64) -> bool {
    *f == DEFAULT_MUTABLE_FRACTION
}

/// The wire form of `Design`: numbers as JSON gives them, so that negative or fractional values are reported
/// as typed errors rather than parser messages.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct DesignRepr {
    size_ratio: f64,
    hot_runs: f64,
    cold_runs: f64,
    #[serde(default = "default_block_bytes")]
    block_bytes: f64,
    buffer_bytes: f64,
    filter_bytes: f64,
    fence_bytes: f64,
    #[serde(default)]
    cache_bytes: f64,
    #[serde(default = "default_granularity")]
    filter_granularity: FilterGranularity,
    #[serde(default = "default_compaction")]
    compaction: Compaction,
    #[serde(default = "default_run_strategy")]
    run_strategy: RunStrategy,
    #[serde(default = "default_file_picking")]
    file_picking: FilePicking,
    #[serde(default = "default_merge_threshold")]
    merge_threshold: f64,
    #[serde(default = "default_full_levels")]
    full_compaction_levels: u32,
    #[serde(default)]
    threads: u32,
    #[serde(default = "default_file_bytes")]
    file_bytes: f64,
    #[serde(default = "default_log")]
    log: LogKind,
    #[serde(default = "default_mutable_fraction")]
    mutable_fraction: f64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    class: Option<DesignClass>,
}

fn whole(field: &'static str, value: f64, memory: bool) -> Result<u64> {
    if !value.is_finite() || value < 0.0 {
        return Err(if memory {
            DesignError::NegativeMemory { field, value }
        } else {
            DesignError::OutOfRange {
                field,
                value: value.to_string(),
                reason: "must be a non-negative integer",
            }
        });
    }
    if value.fract() != 0.0 || value > 2f64.powi(63) {
        return Err(DesignError::OutOfRange {
            field,
            value: value.to_string(),
            reason: "must be a whole number",
        });
    }
    Ok(value as u64)
}

impl TryFrom<DesignRepr> for Design {
    type Error = DesignError;
    fn try_from(r: DesignRepr) -> Result<Self> {
        let d = Design {
            size_ratio: whole("size_ratio", r.size_ratio, false)?,
            hot_runs: whole("hot_runs", r.hot_runs, false)?,
            cold_runs: whole("cold_runs", r.cold_runs, false)?,
            block_bytes: whole("block_bytes", r.block_bytes, false)?,
            buffer_bytes: whole("buffer_bytes", r.buffer_bytes, true)?,
            filter_bytes: whole("filter_bytes", r.filter_bytes, true)?,
            fence_bytes: whole("fence_bytes", r.fence_bytes, true)?,
            cache_bytes: whole("cache_bytes", r.cache_bytes, true)?,
            filter_granularity: r.filter_granularity,
            compaction: r.compaction,
            run_strategy: r.run_strategy,
            file_picking: r.file_picking,
            merge_threshold: r.merge_threshold,
            full_compaction_levels: r.full_compaction_levels,
            threads: r.threads,
            file_bytes: whole("file_bytes", r.file_bytes, false)?,
            log: r.log,
            mutable_fraction: r.mutable_fraction,
            class: r.class,
        };
        d.validate()?;
        Ok(d)
    }
}

fn is_zero(v: &u64) -> bool {
    *v == 0
}

/// The written form of `Design`: whole numbers as JSON integers.
#[derive(Serialize)]
struct DesignOut {
    size_ratio: u64,
    hot_runs: u64,
    cold_runs: u64,
    block_bytes: u64,
    buffer_bytes: u64,
    filter_bytes: u64,
    fence_bytes: u64,
    #[serde(skip_serializing_if = "is_zero")]
    cache_bytes: u64,
    filter_granularity: FilterGranularity,
    compaction: Compaction,
    run_strategy: RunStrategy,
    file_picking: FilePicking,
    merge_threshold: f64,
    full_compaction_levels: u32,
    threads: u32,
    file_bytes: u64,
    log: LogKind,
    #[serde(skip_serializing_if = "is_default_fraction")]
    mutable_fraction: f64,
    #[serde(skip_serializing_if = "Option::is_none")]
    class: Option<DesignClass>,
}

impl From<Design> for DesignOut {
    fn from(d: Design) -> Self {
        DesignOut {
            size_ratio: d.size_ratio,
            hot_runs: d.hot_runs,
            cold_runs: d.cold_runs,
            block_bytes: d.block_bytes,
            buffer_bytes: d.buffer_bytes,
            filter_bytes: d.filter_bytes,
            fence_bytes: d.fence_bytes,
            cache_bytes: d.cache_bytes,
            filter_granularity: d.filter_granularity,
            compaction: d.compaction,
            run_strategy: d.run_strategy,
            file_picking: d.file_picking,
            merge_threshold: d.merge_threshold,
            full_compaction_levels: d.full_compaction_levels,
            threads: d.threads,
            file_bytes: d.file_bytes,
            log: d.log,
            mutable_fraction: d.mutable_fraction,
            class: d.class,
        }
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn one_rule_decides_whether_a_design_runs_as_lsh() {
        let mut d = Design::rocksdb_like(1 << 20, 0, 1 << 20);
        d.class = None;
        d.size_ratio = 14;
        // 4 KiB blocks hold 32 assumed entries: T = 14 is a tree without filters, not a hash log
        assert!(!d.runs_as_lsh());
        d.size_ratio = 1000;
        assert!(d.runs_as_lsh());
        d.filter_bytes = 1 << 10;
        assert!(!d.runs_as_lsh());
        d.class = Some(DesignClass::Lsh);
        assert!(d.runs_as_lsh());
    }

    use super::*;

    #[test]
    fn json_round_trip() {
        let d = Design::rocksdb_like(64 << 20, 10 << 20, 1 << 20);
        let text = d.to_json();
        assert_eq!(Design::from_json(&text).unwrap(), d);
    }

    #[test]
    fn k_not_below_t_is_rejected() {
        let mut d = Design::rocksdb_like(1 << 20, 1 << 20, 1 << 20);
        d.hot_runs = 10;
        assert!(matches!(
            d.validate(),
            Err(DesignError::RunsPerLevel {
                value: 10,
                max: 9,
                ..
            })
        ));
        d.hot_runs = 1;
        d.cold_runs = 0;
        assert!(matches!(
            d.validate(),
            Err(DesignError::RunsPerLevel { value: 0, .. })
        ));
    }

    #[test]
    fn negative_memory_is_a_typed_error() {
        let text = r#"{"size_ratio":10,"hot_runs":1,"cold_runs":1,"buffer_bytes":-5,"filter_bytes":0,"fence_bytes":0}"#;
        assert!(matches!(
            Design::from_json(text),
            Err(DesignError::NegativeMemory {
                field: "buffer_bytes",
                ..
            })
        ));
    }

    #[test]
    fn unknown_field_and_bad_syntax_are_malformed() {
        assert!(matches!(
            Design::from_json("{"),
            Err(DesignError::Malformed { .. })
        ));
        let text = r#"{"size_ratio":10,"hot_runs":1,"cold_runs":1,"buffer_bytes":5,"filter_bytes":0,"fence_bytes":0,"tee":3}"#;
        assert!(matches!(
            Design::from_json(text),
            Err(DesignError::Malformed { .. })
        ));
    }

    #[test]
    fn class_must_match_filters() {
        let mut d = Design::wiredtiger_like(1 << 20, 1 << 20);
        d.filter_bytes = 100;
        assert!(matches!(
            d.validate(),
            Err(DesignError::ClassMismatch { .. })
        ));
    }

    #[test]
    fn algorithm_3() {
        assert_eq!(DesignClass::classify(10, 0, 10, 32), DesignClass::Lsm);
        assert_eq!(DesignClass::classify(10, 2, 10, 32), DesignClass::Hybrid);
        assert_eq!(DesignClass::classify(0, 3, 32, 32), DesignClass::Btree);
        assert_eq!(DesignClass::classify(0, 0, 1000, 32), DesignClass::Lsh);
    }
}

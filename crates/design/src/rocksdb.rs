//! A design in RocksDB's vocabulary: the options a RocksDB 7.x database takes to run an LSM-class [`Design`]
//! (`cosine export rocksdb`, `cosine search --rocksdb-options-out`, and the peer benchmark's `rocksdb-cosine`),
//! and the OPTIONS file RocksDB's own loader reads (`rocksdb::Options::load_latest`).
//!
//! The mapping, and where it is approximate (each approximation is also a [`RocksDbOptions::notes`] line and a
//! comment in the file):
//! - M_B: two memtables of M_B/2 (`write_buffer_size`, `max_write_buffer_number = 2`), as our engine fills one
//!   write buffer while it flushes the other; `db_write_buffer_size = M_B` caps them together.
//! - Leveling (K = Z = 1): `kCompactionStyleLevel`, `max_bytes_for_level_multiplier = T`, and level 1's target
//!   T·M_B/2 (`max_bytes_for_level_base`: our engine's level 1 holds T flushes). Level 0 is merged into level 1 at
//!   every flush (`level0_file_num_compaction_trigger = 1`), as our engine merges a flush into level 1. RocksDB
//!   compacts a level file by file, which is our partial compaction; a full-compaction design is mapped to it.
//! - Tiering (K or Z above 1): `kCompactionStyleUniversal`, K sorted runs before a merge
//!   (`level0_file_num_compaction_trigger`), a merge of at most T runs: universal compaction's size-ratio rule is
//!   not our per-level one, so this mapping is approximate.
//! - M_BF: Bloom filters of M_BF·8/N bits per key, the average of the Monkey allocation, which gives the small
//!   levels more bits: RocksDB gives every level the same.
//! - M_FP: the design's fences all fit (no cold level, the LSM class): index and filter blocks are held by the
//!   table readers, never evicted (`cache_index_and_filter_blocks = false`), as our engine holds them.
//! - M_BC (our entry cache) becomes the block cache's capacity, RocksDB's nearest cache; RocksDB's OPTIONS
//!   file does not record a cache's capacity, so it is written as a comment and set by the caller (the peer
//!   benchmark does).
//! - Blocks of the design's block size, files of its file size, no compression (our engine compresses nothing).
//!
//! B-tree-like, LSH and hybrid designs are refused ([`RocksDbError`]): RocksDB has no in-place B-tree, no
//! hash-indexed log and no cold levels with on-disk fences.

use crate::{Design, DesignClass, ASSUMED_ENTRY_BYTES};
use std::fmt::Write as _;
use thiserror::Error;

/// The RocksDB release whose OPTIONS format the file follows (Debian's librocksdb-dev, what the peers link).
pub const ROCKSDB_VERSION: &str = "7.8.3";

/// Why a design has no RocksDB options.
#[derive(Debug, Error, Clone, PartialEq)]
pub enum RocksDbError {
    /// The design is not an LSM-tree RocksDB can run.
    #[error(
        "a {class} design has no RocksDB equivalent (RocksDB runs LSM-class designs only: filters, every level's fences in memory)"
    )]
    NotLsm {
        /// The design's class.
        class: DesignClass,
    },
    /// The entry count is zero.
    #[error(
        "--entries must be at least 1 (the bits per key of the Bloom filters divide M_BF by it)"
    )]
    NoEntries,
}

/// How RocksDB compacts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CompactionStyle {
    /// Leveled: one sorted run per level, merged file by file.
    Level,
    /// Universal: sorted runs merged when enough gather (tiering).
    Universal,
}

/// RocksDB options for one design: what the OPTIONS file says and what a program sets on `rocksdb::Options`.
#[derive(Clone, Debug, PartialEq)]
pub struct RocksDbOptions {
    /// Bytes of one memtable.
    pub write_buffer_size: u64,
    /// Memtables, the active one and those being flushed.
    pub max_write_buffer_number: u64,
    /// Bytes all memtables may hold together.
    pub db_write_buffer_size: u64,
    /// Leveled or universal.
    pub compaction_style: CompactionStyle,
    /// Level size multiplier (leveled).
    pub max_bytes_for_level_multiplier: f64,
    /// Level 1's target size (leveled).
    pub max_bytes_for_level_base: u64,
    /// Level-0 files (universal: sorted runs) that start a compaction.
    pub level0_file_num_compaction_trigger: u64,
    /// Runs one universal compaction merges at most.
    pub universal_max_merge_width: u64,
    /// Levels RocksDB keeps room for.
    pub num_levels: u64,
    /// SST file size.
    pub target_file_size_base: u64,
    /// Data block size.
    pub block_size: u64,
    /// Bloom filter bits per key (0: no filter).
    pub bloom_bits_per_key: f64,
    /// Index and filter blocks in the block cache (false: held by the table readers, never evicted).
    pub cache_index_and_filter_blocks: bool,
    /// Block cache bytes (not recorded by an OPTIONS file; set by the caller).
    pub block_cache_bytes: u64,
    /// Where the mapping is approximate, one line each.
    pub notes: Vec<String>,
}

impl RocksDbOptions {
    /// The options that run `design` over `entries` entries of `entry_bytes` each (key and value), or why there
    /// are none.
    pub fn for_design(
        design: &Design,
        entries: u64,
        entry_bytes: u64,
    ) -> Result<Self, RocksDbError> {
        let class = design.class.unwrap_or_else(|| {
            DesignClass::classify(
                design.filter_bytes,
                0,
                design.size_ratio,
                (design.block_bytes / ASSUMED_ENTRY_BYTES).max(1),
            )
        });
        if class != DesignClass::Lsm {
            return Err(RocksDbError::NotLsm { class });
        }
        if entries == 0 {
            return Err(RocksDbError::NoEntries);
        }
        let mut notes = Vec::new();
        let flush = design.buffer_bytes / Design::WRITE_BUFFERS;
        let t = design.size_ratio;
        let tiered = design.hot_runs > 1 || design.cold_runs > 1;
        let (style, trigger) = if tiered {
            notes.push(format!(
                "K = {} and Z = {} runs a level: universal compaction ({} sorted runs before a merge, at most T = {t} merged) stands in for tiering; its size-ratio rule is not our per-level one",
                design.hot_runs, design.cold_runs, design.hot_runs
            ));
            (CompactionStyle::Universal, design.hot_runs.max(2))
        } else {
            (CompactionStyle::Level, 1)
        };
        if !tiered && design.compaction == crate::Compaction::Full {
            notes.push(
                "full compaction (a level merged whole) runs as RocksDB's file-by-file leveled compaction"
                    .into(),
            );
        }
        if design.merge_threshold < 1.0 {
            notes.push(format!(
                "merge threshold {}: RocksDB compacts a level when it exceeds its target, not at a share of it",
                design.merge_threshold
            ));
        }
        let bits = design.filter_bytes as f64 * 8.0 / entries as f64;
        if bits > 0.0 {
            notes.push(format!(
                "Bloom filters of {bits:.2} bits per key on every level: M_BF over the {entries} entries, where Monkey gives the small levels more"
            ));
        }
        if design.cache_bytes > 0 {
            notes.push(format!(
                "the entry cache's {} bytes (M_BC) become the block cache, which caches blocks, not entries; an OPTIONS file does not record it",
                design.cache_bytes
            ));
        }
        // levels: level 1 holds T flushes, each level T times the one above, until the entries fit
        let data = entries as f64 * entry_bytes.max(1) as f64;
        let mut levels = 1u64;
        let mut capacity = (t * flush) as f64;
        while capacity < data && levels < 64 {
            capacity *= t as f64;
            levels += 1;
        }
        Ok(RocksDbOptions {
            write_buffer_size: flush.max(1),
            max_write_buffer_number: Design::WRITE_BUFFERS,
            db_write_buffer_size: design.buffer_bytes.max(1),
            compaction_style: style,
            max_bytes_for_level_multiplier: t as f64,
            max_bytes_for_level_base: (t * flush).max(1),
            level0_file_num_compaction_trigger: trigger,
            universal_max_merge_width: t.max(2),
            // RocksDB's default 7, or one more than the design's levels (level 0 is the memtables' flushes)
            num_levels: (levels + 1).max(7),
            target_file_size_base: design.file_bytes.max(1),
            block_size: design.block_bytes,
            bloom_bits_per_key: (bits * 100.0).round() / 100.0,
            cache_index_and_filter_blocks: false,
            block_cache_bytes: design.cache_bytes,
            notes,
        })
    }

    /// The OPTIONS file (RocksDB 7.x's INI format: `[Version]`, `[DBOptions]`, and the default column family's
    /// `[CFOptions]` and `[TableOptions/BlockBasedTable]`), with the notes as comments.
    pub fn options_file(&self) -> String {
        let mut s = String::new();
        let _ = writeln!(
            s,
            "# RocksDB options for a Cosine design (cosine export rocksdb)"
        );
        for n in &self.notes {
            let _ = writeln!(s, "# approximate: {n}");
        }
        if self.block_cache_bytes > 0 {
            let _ = writeln!(
                s,
                "# block cache: {} bytes (an OPTIONS file does not record a cache's capacity: set it in code, BlockBasedTableOptions::block_cache)",
                self.block_cache_bytes
            );
        }
        let _ = writeln!(s);
        let _ = writeln!(s, "[Version]");
        let _ = writeln!(s, "  rocksdb_version={ROCKSDB_VERSION}");
        let _ = writeln!(s, "  options_file_version=1.1");
        let _ = writeln!(s);
        let _ = writeln!(s, "[DBOptions]");
        let _ = writeln!(s, "  create_if_missing=true");
        let _ = writeln!(s, "  db_write_buffer_size={}", self.db_write_buffer_size);
        let _ = writeln!(s);
        let _ = writeln!(s, "[CFOptions \"default\"]");
        let _ = writeln!(s, "  write_buffer_size={}", self.write_buffer_size);
        let _ = writeln!(
            s,
            "  max_write_buffer_number={}",
            self.max_write_buffer_number
        );
        match self.compaction_style {
            CompactionStyle::Level => {
                let _ = writeln!(s, "  compaction_style=kCompactionStyleLevel");
                let _ = writeln!(
                    s,
                    "  max_bytes_for_level_multiplier={:.6}",
                    self.max_bytes_for_level_multiplier
                );
                let _ = writeln!(
                    s,
                    "  max_bytes_for_level_base={}",
                    self.max_bytes_for_level_base
                );
            }
            CompactionStyle::Universal => {
                let _ = writeln!(s, "  compaction_style=kCompactionStyleUniversal");
                let _ = writeln!(
                    s,
                    "  compaction_options_universal={{min_merge_width=2;max_merge_width={};size_ratio=1;}}",
                    self.universal_max_merge_width
                );
            }
        }
        let _ = writeln!(
            s,
            "  level0_file_num_compaction_trigger={}",
            self.level0_file_num_compaction_trigger
        );
        let _ = writeln!(s, "  num_levels={}", self.num_levels);
        let _ = writeln!(s, "  target_file_size_base={}", self.target_file_size_base);
        let _ = writeln!(s, "  compression=kNoCompression");
        let _ = writeln!(s, "  bottommost_compression=kDisableCompressionOption");
        let _ = writeln!(s);
        let _ = writeln!(s, "[TableOptions/BlockBasedTable \"default\"]");
        let _ = writeln!(s, "  block_size={}", self.block_size);
        if self.bloom_bits_per_key > 0.0 {
            let _ = writeln!(
                s,
                "  filter_policy=bloomfilter:{}:false",
                self.bloom_bits_per_key
            );
        }
        let _ = writeln!(
            s,
            "  cache_index_and_filter_blocks={}",
            self.cache_index_and_filter_blocks
        );
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lsm() -> Design {
        let mut d = Design::rocksdb_like(64 << 20, 125_000_000, 40 << 20);
        d.class = Some(DesignClass::Lsm);
        d
    }

    #[test]
    fn a_leveled_design_maps_to_leveled_compaction_with_its_multiplier_and_filters() {
        let o = RocksDbOptions::for_design(&lsm(), 100_000_000, 1024).unwrap();
        assert_eq!(o.compaction_style, CompactionStyle::Level);
        assert_eq!(o.write_buffer_size, 32 << 20);
        assert_eq!(o.max_write_buffer_number, 2);
        assert_eq!(o.max_bytes_for_level_base, 10 * (32 << 20));
        assert_eq!(o.max_bytes_for_level_multiplier, 10.0);
        assert_eq!(o.bloom_bits_per_key, 10.0);
        assert_eq!(o.level0_file_num_compaction_trigger, 1);
        let f = o.options_file();
        for line in [
            "[Version]",
            "[DBOptions]",
            "[CFOptions \"default\"]",
            "[TableOptions/BlockBasedTable \"default\"]",
            "  compaction_style=kCompactionStyleLevel",
            "  filter_policy=bloomfilter:10:false",
            "  write_buffer_size=33554432",
            "  compression=kNoCompression",
        ] {
            assert!(f.lines().any(|l| l == line), "{line} missing from\n{f}");
        }
    }

    #[test]
    fn a_tiered_design_maps_to_universal_compaction_and_says_it_is_approximate() {
        let mut d = lsm();
        d.size_ratio = 8;
        d.hot_runs = 7;
        d.cold_runs = 7;
        let o = RocksDbOptions::for_design(&d, 100_000_000, 1024).unwrap();
        assert_eq!(o.compaction_style, CompactionStyle::Universal);
        assert_eq!(o.level0_file_num_compaction_trigger, 7);
        assert!(o.notes.iter().any(|n| n.contains("universal")));
        assert!(o
            .options_file()
            .contains("compaction_options_universal={min_merge_width=2;max_merge_width=8;"));
    }

    #[test]
    fn designs_rocksdb_cannot_run_are_refused() {
        for class in [DesignClass::Btree, DesignClass::Lsh, DesignClass::Hybrid] {
            let mut d = lsm();
            d.class = Some(class);
            assert_eq!(
                RocksDbOptions::for_design(&d, 1000, 1024),
                Err(RocksDbError::NotLsm { class })
            );
        }
        // no filters and no recorded class: Algorithm 3 calls it a B-tree
        let mut d = lsm();
        d.class = None;
        d.filter_bytes = 0;
        assert!(RocksDbOptions::for_design(&d, 1000, 1024).is_err());
        assert_eq!(
            RocksDbOptions::for_design(&lsm(), 0, 1024),
            Err(RocksDbError::NoEntries)
        );
    }
}

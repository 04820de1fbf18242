//! A design in RocksDB's vocabulary: the options a RocksDB 7.x database takes to run an LSM-class [`Design`]
//! (`cosine export rocksdb`, `cosine search --rocksdb-options-out`, the explorer's download), and the OPTIONS
//! file RocksDB's own loader reads (`rocksdb::Options::load_latest`). The peer benchmark's `rocksdb-cosine`
//! predates this mapping and sets its options in code.
//!
//! The mapping, and where it is approximate (each approximation is also a [`RocksDbOptions::notes`] line and a
//! comment in the file):
//! - M_B: two memtables of M_B/2 (`write_buffer_size`, `max_write_buffer_number = 2`), as our engine fills one
//!   write buffer while it flushes the other (`db_write_buffer_size = M_B` flushes when both reach it).
//! - Leveling (K = Z = 1): `kCompactionStyleLevel` with static level targets
//!   (`level_compaction_dynamic_level_bytes = false`), `max_bytes_for_level_multiplier = T`, and level i's target
//!   θ·(M_B/2)·T^i, where our engine pushes level i down (`max_bytes_for_level_base` = θ·T·M_B/2). Level 0 is
//!   merged into level 1 at every flush (`level0_file_num_compaction_trigger = 1`), as our engine merges a flush
//!   into level 1. RocksDB compacts a level file by file, which is our partial compaction; a full-compaction
//!   design is mapped to it.
//! - Tiering (K or Z above 1): `kCompactionStyleUniversal`, as many sorted runs as the design holds before a
//!   merge (K a level above the last, Z at the last), merges of K to T runs, and a size amplification allowed
//!   up to what the design's runs beside its oldest hold: universal compaction's rules are not our per-level
//!   ones, so this mapping is approximate.
//! - M_BF: Bloom filters of M_BF·8/N bits per key, the average of the Monkey allocation, which gives the small
//!   levels more bits: RocksDB gives every level the same, uses at most 100 bits a key and none below 0.5; the
//!   filter memory it cannot use goes to the block cache.
//! - M_FP: an LSM-class design holds every level's fences; RocksDB's index and filter blocks are held by the
//!   table readers, never evicted (`cache_index_and_filter_blocks = false`). A design without a recorded class
//!   whose M_FP cannot hold the index is a hybrid (cold levels) and is refused.
//! - M_BC (our entry cache) and the filter memory RocksDB cannot use become the block cache
//!   (`block_cache=<bytes>`, which RocksDB reads and does not write back; `no_block_cache=true` when there is
//!   none, where RocksDB would make an 8 MiB one).
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
    /// A design without a recorded class whose fences do not all fit M_FP: a hybrid to Algorithm 3.
    #[error(
        "M_FP ({fence_bytes} bytes) cannot hold the index of {entries} entries ({needed} bytes): a hybrid design (cold levels), which RocksDB cannot run"
    )]
    ColdLevels {
        /// M_FP.
        fence_bytes: u64,
        /// The entries.
        entries: u64,
        /// Bytes of index the entries need.
        needed: u64,
    },
}

/// Bytes of one index entry beside its key: a block handle, as our engine's fence pointer (and RocksDB's index
/// entry, a separator key and a handle) holds it.
pub const INDEX_ENTRY_OVERHEAD_BYTES: u64 = 20;

/// The most bits per key RocksDB's Bloom filter uses (it clamps above).
pub const MAX_BLOOM_BITS_PER_KEY: f64 = 100.0;

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
    /// Runs one universal compaction merges at least.
    pub universal_min_merge_width: u64,
    /// Runs one universal compaction merges at most.
    pub universal_max_merge_width: u64,
    /// Universal compaction's size amplification limit, percent.
    pub universal_max_size_amplification_percent: u64,
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
    /// Block cache bytes (0: none).
    pub block_cache_bytes: u64,
    /// Where the mapping is approximate, one line each.
    pub notes: Vec<String>,
}

impl RocksDbOptions {
    /// The options that run `design` over `entries` entries of `entry_bytes` each (key and value) with keys of
    /// `key_bytes`, or why there are none.
    pub fn for_design(
        design: &Design,
        entries: u64,
        entry_bytes: u64,
        key_bytes: u64,
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
        // the index of every data block: a key and a handle a block
        let per_block = (design.block_bytes / entry_bytes.max(1)).max(1);
        let needed = entries.div_ceil(per_block) * (key_bytes + INDEX_ENTRY_OVERHEAD_BYTES);
        if design.class.is_none() && design.fence_bytes < needed {
            return Err(RocksDbError::ColdLevels {
                fence_bytes: design.fence_bytes,
                entries,
                needed,
            });
        }
        let mut notes = Vec::new();
        let flush = design.buffer_bytes / Design::WRITE_BUFFERS;
        let t = design.size_ratio;
        let theta = design.merge_threshold.clamp(0.01, 1.0);
        let base = ((t as f64 * flush as f64 * theta) as u64).max(1);
        // levels: level 1 holds θ·T flushes, each level T times the one above, until the entries fit
        let levels = u64::from(
            crate::shape::level_count(
                entries as f64,
                entry_bytes.max(1) as f64,
                design.level_base_bytes(),
                t as f64,
            )
            .max(1),
        );
        let (k, z) = (design.hot_runs, design.cold_runs);
        let tiered = k > 1 || z > 1;
        let runs = k * (levels - 1) + z;
        let (style, trigger) = if tiered {
            notes.push(format!(
                "K = {k} and Z = {z} runs a level: universal compaction (up to {runs} sorted runs, merges of {} to {t}) stands in for tiering; its rules are not our per-level ones",
                k.max(2)
            ));
            (CompactionStyle::Universal, runs.max(2))
        } else {
            (CompactionStyle::Level, 1)
        };
        if !tiered && design.compaction == crate::Compaction::Full {
            notes.push(
                "full compaction (a level merged whole) runs as RocksDB's file-by-file leveled compaction"
                    .into(),
            );
        }
        let bits = design.filter_bytes as f64 * 8.0 / entries as f64;
        let used_bits = if bits < 0.5 {
            0.0
        } else {
            bits.min(MAX_BLOOM_BITS_PER_KEY)
        };
        if used_bits > 0.0 {
            notes.push(format!(
                "Bloom filters of {used_bits:.2} bits per key on every level: M_BF over the {entries} entries, where Monkey gives the small levels more"
            ));
        }
        if bits > MAX_BLOOM_BITS_PER_KEY {
            notes.push(format!(
                "M_BF gives {bits:.1} bits a key; RocksDB uses at most {MAX_BLOOM_BITS_PER_KEY}, and the rest goes to the block cache"
            ));
        } else if bits > 0.0 && used_bits == 0.0 {
            notes.push(format!(
                "M_BF gives {bits:.2} bits a key, below RocksDB's 0.5: no filter, and the memory goes to the block cache"
            ));
        }
        let unused_filter = ((bits - used_bits) * entries as f64 / 8.0).max(0.0) as u64;
        if design.cache_bytes > 0 {
            notes.push(format!(
                "the entry cache's {} bytes (M_BC) become the block cache, which caches blocks, not entries",
                design.cache_bytes
            ));
        }
        // universal compaction's size amplification: the runs beside the oldest, against it ((Z − 1) runs of
        // the last level, and the levels above, about 1/(T − 1) of it)
        let amplification = (100.0 * ((z - 1) as f64 + 1.0 / (t - 1).max(1) as f64)).ceil() as u64;
        Ok(RocksDbOptions {
            write_buffer_size: flush.max(1),
            max_write_buffer_number: Design::WRITE_BUFFERS,
            db_write_buffer_size: design.buffer_bytes.max(1),
            compaction_style: style,
            max_bytes_for_level_multiplier: t as f64,
            max_bytes_for_level_base: base,
            level0_file_num_compaction_trigger: trigger,
            universal_min_merge_width: k.max(2),
            universal_max_merge_width: t.max(2),
            universal_max_size_amplification_percent: amplification.max(1),
            // RocksDB's default 7, or one more than the design's levels (level 0 is the memtables' flushes)
            num_levels: (levels + 1).max(7),
            target_file_size_base: design.file_bytes.max(1),
            block_size: design.block_bytes,
            bloom_bits_per_key: (used_bits * 100.0).round() / 100.0,
            cache_index_and_filter_blocks: false,
            block_cache_bytes: design.cache_bytes + unused_filter,
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
                let _ = writeln!(s, "  level_compaction_dynamic_level_bytes=false");
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
                    "  compaction_options_universal={{min_merge_width={};max_merge_width={};size_ratio=1;max_size_amplification_percent={};}}",
                    self.universal_min_merge_width,
                    self.universal_max_merge_width,
                    self.universal_max_size_amplification_percent
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
        if self.block_cache_bytes > 0 {
            // RocksDB reads a capacity here (an LRU cache) and does not write it back
            let _ = writeln!(s, "  block_cache={}", self.block_cache_bytes);
        } else {
            let _ = writeln!(s, "  no_block_cache=true");
        }
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
        let o = RocksDbOptions::for_design(&lsm(), 100_000_000, 1024, 16).unwrap();
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
        let o = RocksDbOptions::for_design(&d, 100_000_000, 1024, 16).unwrap();
        assert_eq!(o.compaction_style, CompactionStyle::Universal);
        // 10^8 entries of 1 KiB over levels of 8·32 MiB·8^i: 4 levels, so 7·3 + 7 runs before a merge
        assert_eq!(o.level0_file_num_compaction_trigger, 7 * 3 + 7);
        assert!(o.notes.iter().any(|n| n.contains("universal")));
        assert!(o.options_file().contains(
            "compaction_options_universal={min_merge_width=7;max_merge_width=8;size_ratio=1;max_size_amplification_percent=615;}"
        ));
    }

    #[test]
    fn filter_memory_rocksdb_cannot_use_goes_to_the_block_cache() {
        // 150 bits a key: RocksDB uses 100, the other 50 bits a key join the block cache
        let mut d = lsm();
        d.filter_bytes = 150 * 1_000_000 / 8;
        d.cache_bytes = 1 << 20;
        let o = RocksDbOptions::for_design(&d, 1_000_000, 1024, 16).unwrap();
        assert_eq!(o.bloom_bits_per_key, 100.0);
        assert_eq!(o.block_cache_bytes, (1 << 20) + 50 * 1_000_000 / 8);
        assert!(o.notes.iter().any(|n| n.contains("at most 100")));
        assert!(o
            .options_file()
            .lines()
            .any(|l| l == format!("  block_cache={}", o.block_cache_bytes)));
        // no cache at all: RocksDB would make an 8 MiB one
        let o = RocksDbOptions::for_design(&lsm(), 100_000_000, 1024, 16).unwrap();
        assert_eq!(o.block_cache_bytes, 0);
        assert!(o
            .options_file()
            .lines()
            .any(|l| l == "  no_block_cache=true"));
    }

    #[test]
    fn a_merge_threshold_lowers_the_level_targets() {
        let mut d = lsm();
        d.merge_threshold = 0.5;
        let o = RocksDbOptions::for_design(&d, 100_000_000, 1024, 16).unwrap();
        assert_eq!(o.max_bytes_for_level_base, 10 * (32 << 20) / 2);
    }

    #[test]
    fn designs_rocksdb_cannot_run_are_refused() {
        for class in [DesignClass::Btree, DesignClass::Lsh, DesignClass::Hybrid] {
            let mut d = lsm();
            d.class = Some(class);
            assert_eq!(
                RocksDbOptions::for_design(&d, 1000, 1024, 16),
                Err(RocksDbError::NotLsm { class })
            );
        }
        // filters but too little M_FP for the index and no recorded class: a hybrid (cold levels)
        let mut d = lsm();
        d.class = None;
        d.fence_bytes = 1 << 20;
        assert!(matches!(
            RocksDbOptions::for_design(&d, 100_000_000, 1024, 16),
            Err(RocksDbError::ColdLevels { .. })
        ));
        // no filters and no recorded class: Algorithm 3 calls it a B-tree
        let mut d = lsm();
        d.class = None;
        d.filter_bytes = 0;
        assert!(RocksDbOptions::for_design(&d, 1000, 1024, 16).is_err());
        assert_eq!(
            RocksDbOptions::for_design(&lsm(), 0, 1024, 16),
            Err(RocksDbError::NoEntries)
        );
    }
}

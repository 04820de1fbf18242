//! The fixed systems Cosine compares with (RocksDB, WiredTiger, FASTER): their designs on a VM, as the paper's
//! Section 7 shapes them.

use crate::designs::shapes::{base_design, with_class_defaults};
use crate::designs::Shard;
use cosine_cost_model::dist::LshEngine;
use cosine_cost_model::layout::{self};
use cosine_cost_model::ReferenceQuirks;
use cosine_design::{Design, DesignClass};
use serde::Serialize;
use std::hash::Hash;

/// The leaf (block) size of the fixed WiredTiger design: WiredTiger's default `leaf_page_max`, the B-tree its φ
/// entry is measured on (`cosine-peers --calibrate-phi` runs `wiredtiger-32k` for it).
pub const WIREDTIGER_LEAF_BYTES: u64 = 32 * 1024;

/// The fixed engines Cosine compares with (Section 7).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Baseline {
    /// RocksDB-shaped: T = 10, leveling, 10 bits per key, fences for every block.
    RocksDb,
    /// WiredTiger-shaped: a B-tree, T = 32 over 32 KiB leaves (WiredTiger's default leaf size, the table its φ
    /// is measured on: `cosine-peers --calibrate-phi` with `wiredtiger-32k`), no filters.
    WiredTiger,
    /// FASTER-shaped: a log-structured hash table.
    Faster,
}

impl Baseline {
    /// All three.
    pub const ALL: [Baseline; 3] = [Baseline::RocksDb, Baseline::WiredTiger, Baseline::Faster];

    /// Display name.
    pub fn name(self) -> &'static str {
        match self {
            Baseline::RocksDb => "RocksDB",
            Baseline::WiredTiger => "WiredTiger",
            Baseline::Faster => "FASTER",
        }
    }

    /// Its entry in the φ library.
    pub fn phi_key(self) -> &'static str {
        match self {
            Baseline::RocksDb => "rocksdb",
            Baseline::WiredTiger => "wiredtiger",
            Baseline::Faster => "faster",
        }
    }

    /// How the model scores the real system: the fixed model, as for our designs (FASTER's own engine comes in
    /// through [`Baseline::lsh_engine`]). The authors' calibrated FASTER (lookups × 1.8 conditioned on K full
    /// runs, `ReferenceQuirks::lsh_calibrated`) priced a YCSB-C lookup at 1.8 M records in 256 MiB at 0.34
    /// I/Os where FASTER read about one record per lookup outside its in-memory log (BENCHMARKS.md); the quirk
    /// stays in the cost model (`cosine cost --quirks reference`), not in the search.
    pub fn model_quirks(self) -> ReferenceQuirks {
        ReferenceQuirks::NONE
    }

    /// The engine that runs the system's LSH design: FASTER's own read path, memory, scans and writes for
    /// FASTER ([`LshEngine::Faster`]), ours otherwise.
    pub fn lsh_engine(self) -> LshEngine {
        match self {
            Baseline::Faster => LshEngine::Faster,
            _ => LshEngine::Cosine,
        }
    }
}

impl Shard<'_> {
    /// A fixed system's design on this VM (Cosine Section 7 baselines, MODEL.md §7), or None when it cannot run
    /// in the VM's memory.
    pub fn baseline_design(&self, system: Baseline) -> Option<Design> {
        let shape = self.shape();
        let m = self.memory_bytes as f64;
        match system {
            Baseline::RocksDb => {
                // 10 bits per key and fences for every block; the buffer gets what is left
                let (filters, fences) = layout::lsm_index_bytes(
                    shape.entries,
                    shape.key_bytes,
                    shape.entries_per_block,
                    10.0,
                );
                let m_b = m - filters - fences;
                (m_b >= 1024.0 * 1024.0).then(|| {
                    let d = with_class_defaults(
                        base_design(
                            10,
                            1,
                            1,
                            self.block_bytes,
                            m_b as u64,
                            filters as u64,
                            fences.ceil() as u64,
                        ),
                        DesignClass::Lsm,
                    );
                    self.within_ceiling(d)
                })
            }
            Baseline::WiredTiger => {
                // T = 32 over 32 KiB leaves; the buffer holds what one level of fences can address
                let block = WIREDTIGER_LEAF_BYTES;
                let b = (block as f64 / shape.entry_bytes).floor().max(1.0);
                let be = b * shape.entry_bytes;
                let m_b = m * be / (shape.key_bytes * 32.0 + be);
                let d = base_design(32, 1, 1, block, m_b as u64, 0, (m - m_b) as u64);
                (b >= 32.0).then(|| self.within_ceiling(with_class_defaults(d, DesignClass::Btree)))
            }
            // the hybrid log over an in-memory hash index of every key: FASTER's index never spills to disk
            // (its buckets hold tags and addresses; a collision follows the log's chain), so it is sized as our
            // engine's, the rest of memory the log's pages (how FASTER reads, fills and scans them:
            // `LshEngine::Faster`)
            Baseline::Faster => self.lsh_design(),
        }
    }

    /// A fixed system's design with its write buffer cut to what recovers in time
    /// ([`Shard::buffer_ceiling`]), the memory cut from it its cache (RocksDB's block cache, WiredTiger's page
    /// cache), priced as the entry cache.
    fn within_ceiling(&self, mut d: Design) -> Design {
        let ceiling = self.buffer_ceiling();
        if d.buffer_bytes > ceiling {
            d.cache_bytes += d.buffer_bytes - ceiling;
            d.buffer_bytes = ceiling;
        }
        d
    }
}

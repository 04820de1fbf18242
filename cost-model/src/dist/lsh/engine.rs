//! The engine that runs an LSH design: ours or FASTER's hybrid log. Every rule in which FASTER's pricing
//! differs from ours is a method here.

use crate::PerOp;
use cosine_design::{Design, LogKind};

/// The engine that runs an LSH-class design, where the two differ in what the model prices: how a lookup reads
/// a record on disk, what the log keeps in memory, and how a scan and a write are served.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum LshEngine {
    /// Our engine: a lookup reads the block its hash index points to; the write buffer (the hybrid log's
    /// mutable region) holds the workload's writes and the read-only region the newest flushed records; a scan
    /// seeks every run; writes are flushed and merged.
    #[default]
    Cosine,
    /// FASTER (Microsoft's hybrid log): a lookup that leaves memory reads the record's header first
    /// (`MinIoRequestSize`, one sector), then the rest of the record when it runs past that sector
    /// (`AsyncGetFromDiskCallback` in faster.h; a YCSB-C run under strace: 25,511 reads of 512 B and 25,511 of
    /// 1,536 B for 1 KB records); its in-memory log pages are always full of the newest records, the load's
    /// until writes replace them; its hash index is in memory, so a miss reads nothing; it has no ordered
    /// scan, so a scan of s keys is s lookups (the authors' pricing too); a write is appended to the log.
    Faster,
}

/// Bytes of a disk sector, FASTER's unit of reading its log.
pub const FASTER_SECTOR_BYTES: f64 = 512.0;

/// Bytes of a FASTER record's header (its `RecordInfo`).
pub const FASTER_RECORD_HEADER_BYTES: f64 = 8.0;

impl LshEngine {
    /// Device reads a lookup makes for a record on disk of `entry_bytes` (key and value): 1 for our engine;
    /// for FASTER the header's sector, and a second read with the chance that the record, starting anywhere in
    /// that sector, runs past it.
    pub fn record_reads(self, entry_bytes: f64) -> f64 {
        match self {
            LshEngine::Cosine => 1.0,
            LshEngine::Faster => {
                1.0 + ((entry_bytes + FASTER_RECORD_HEADER_BYTES) / FASTER_SECTOR_BYTES).min(1.0)
            }
        }
    }

    /// The log's newest records in memory, each region with whether it outlives the load (its entries, and
    /// whether the load's records stay there): ours, the write buffer (the hybrid log's mutable region,
    /// updated in place; `buffer` entries on average) and, with a hybrid log, the read-only region of the
    /// newest flushed records (`read_only`); FASTER's log pages, always full, M_B of records.
    pub(in crate::dist) fn memory(
        self,
        design: &Design,
        entry_bytes: f64,
        buffer: f64,
        read_only: f64,
    ) -> [(f64, bool); 2] {
        match (self, design.log) {
            (LshEngine::Faster, _) => [
                (design.buffer_bytes as f64 / entry_bytes, true),
                (0.0, false),
            ],
            (LshEngine::Cosine, LogKind::Hybrid) => [(buffer, false), (read_only, true)],
            (LshEngine::Cosine, LogKind::AppendOnly) => [(buffer, false), (0.0, false)],
        }
    }

    /// The newest inserts a "latest" lookup finds in memory: ours, the write buffer's (`buffer` entries) and
    /// the read-only region's; FASTER's log pages, the load's records until writes replace them.
    pub(in crate::dist) fn newest_in_memory(
        self,
        design: &Design,
        entry_bytes: f64,
        buffer: f64,
        read_only: f64,
    ) -> f64 {
        match self {
            LshEngine::Faster => design.buffer_bytes as f64 / entry_bytes,
            LshEngine::Cosine => buffer + read_only,
        }
    }

    /// Whether a lookup reads the on-disk hash index of each cold run it passes: ours keeps the indexes of
    /// the newest runs in M_FP and reads the others'; FASTER's hash index is all in memory.
    pub(in crate::dist) fn reads_cold_indexes(self) -> bool {
        self == LshEngine::Cosine
    }

    /// Whether writes are flushed into runs that the engine's planner merges (ours: their price follows its
    /// levels, simulated where it runs) or appended to one log (FASTER).
    pub(in crate::dist) fn merges_runs(self) -> bool {
        self == LshEngine::Cosine
    }

    /// The costs FASTER decides alone, given a lookup's blocks: a write goes to its log's tail, written out a
    /// page at a time (1/B); a miss finds no key in its in-memory index (0); a scan of s keys is s lookups (it
    /// has no ordered scan). None for our engine, whose writes, misses and scans follow its runs.
    pub(in crate::dist) fn own_costs(
        self,
        lookup: f64,
        entries_per_block: f64,
        scan_length: f64,
    ) -> Option<(PerOp, f64)> {
        if self != LshEngine::Faster {
            return None;
        }
        let write = 1.0 / entries_per_block;
        let scan = scan_length * lookup;
        Some((
            PerOp {
                lookup,
                empty_lookup: 0.0,
                insert: write,
                blind_update: write,
                rmw: lookup + write,
                long_scan: scan,
                short_scan: scan,
            },
            scan,
        ))
    }
}

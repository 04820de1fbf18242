//! The engine that runs an LSH design: ours or FASTER's hybrid log, and what each reads for a record.

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
}

//! I/O counters, per level: what the engine did, in the units the cost model predicts.

use std::cell::Cell;
use std::sync::atomic::{AtomicU64, Ordering};

thread_local! {
    static THREAD_READS: Cell<u64> = const { Cell::new(0) };
}

/// Read-path blocks (data and index) that lookups and scans on the calling thread have read so far, over
/// every engine in the process: a harness attributes I/O to each of its operations with it (background
/// flushes and compactions run on their own threads and are not counted here).
pub fn thread_read_blocks() -> u64 {
    THREAD_READS.with(Cell::get)
}

/// Most levels counted separately; deeper levels share the last slot.
pub const MAX_LEVELS: usize = 32;

/// Counters for one disk level.
#[derive(Debug, Default)]
pub struct LevelCounters {
    /// Data blocks read by lookups and scans.
    pub block_reads: AtomicU64,
    /// On-disk index blocks read by lookups and scans (cold levels).
    pub index_reads: AtomicU64,
    /// Blocks (data and index) written by flushes and compactions into this level.
    pub block_writes: AtomicU64,
    /// Filter probes.
    pub filter_probes: AtomicU64,
    /// Probes the filter answered "absent" (I/O saved).
    pub filter_negatives: AtomicU64,
    /// Probes the filter answered "present" for a key the block did not hold.
    pub false_positives: AtomicU64,
    /// Blocks read by compactions out of this level.
    pub compaction_reads: AtomicU64,
    /// Point lookups a run of this level answered (a value or a tombstone): where lookups end. (The lookups
    /// a buffer or the entry cache answers touch no shared counter: their path stays free of cache-line
    /// traffic between client threads.)
    pub found: AtomicU64,
}

/// Counters for every level plus byte totals.
#[derive(Debug)]
pub struct IoStats {
    levels: Vec<LevelCounters>,
    /// Bytes written by flushes (buffer to level 1).
    pub bytes_flushed: AtomicU64,
    /// Bytes read by compactions.
    pub bytes_compacted_read: AtomicU64,
    /// Bytes written by compactions.
    pub bytes_compacted_written: AtomicU64,
    /// Key ranges that compactions merged on threads of their own (`Design.threads` > 1), beside the first.
    pub subcompactions: AtomicU64,
}

impl Default for IoStats {
    fn default() -> Self {
        IoStats {
            levels: (0..MAX_LEVELS).map(|_| LevelCounters::default()).collect(),
            bytes_flushed: AtomicU64::new(0),
            bytes_compacted_read: AtomicU64::new(0),
            bytes_compacted_written: AtomicU64::new(0),
            subcompactions: AtomicU64::new(0),
        }
    }
}

impl IoStats {
    /// Counters of disk level `level` (1-based).
    pub fn level(&self, level: usize) -> &LevelCounters {
        &self.levels[level.clamp(1, MAX_LEVELS) - 1]
    }

    /// Adds one to a counter.
    pub fn bump(counter: &AtomicU64) {
        counter.fetch_add(1, Ordering::Relaxed);
    }

    /// Adds one to a read-path counter (data or index block of a lookup or scan) and to the thread's count.
    pub fn bump_read(counter: &AtomicU64) {
        counter.fetch_add(1, Ordering::Relaxed);
        THREAD_READS.with(|c| c.set(c.get() + 1));
    }

    /// A plain copy of every level's counters (levels 1..=n).
    pub fn snapshot(&self, n: usize) -> Vec<LevelSnapshot> {
        self.levels
            .iter()
            .take(n.min(MAX_LEVELS))
            .map(|c| LevelSnapshot {
                block_reads: c.block_reads.load(Ordering::Relaxed),
                index_reads: c.index_reads.load(Ordering::Relaxed),
                block_writes: c.block_writes.load(Ordering::Relaxed),
                filter_probes: c.filter_probes.load(Ordering::Relaxed),
                filter_negatives: c.filter_negatives.load(Ordering::Relaxed),
                false_positives: c.false_positives.load(Ordering::Relaxed),
                compaction_reads: c.compaction_reads.load(Ordering::Relaxed),
                found: c.found.load(Ordering::Relaxed),
            })
            .collect()
    }
}

/// A copy of one level's counters.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct LevelSnapshot {
    /// Data blocks read by lookups and scans.
    pub block_reads: u64,
    /// Index blocks read by lookups and scans.
    pub index_reads: u64,
    /// Blocks written.
    pub block_writes: u64,
    /// Filter probes.
    pub filter_probes: u64,
    /// Filter "absent" answers.
    pub filter_negatives: u64,
    /// False positives.
    pub false_positives: u64,
    /// Blocks read by compactions.
    pub compaction_reads: u64,
    /// Point lookups a run of this level answered.
    pub found: u64,
}

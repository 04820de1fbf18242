//! The [`Store`] trait the harness drives, its errors and I/O counters, and our engine behind it
//! ([`CosineStore`]); peer engines implement it in `cosine-peers`.

use cosine_engine::Engine;
use serde::Serialize;
use std::sync::Arc;

/// I/O counters of a store, where it has them.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct IoCounters {
    /// Data and index blocks read by reads and scans.
    pub reads: u64,
    /// Blocks written and read by flushes and compactions.
    pub background: u64,
}

/// Entries a scan returns: (key, value) in key order.
pub type Entries = Vec<(Vec<u8>, Vec<u8>)>;

/// What a store's operation failed with.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// Cosine's engine, with its typed error (I/O, corruption, poisoned, closed, sizes).
    #[error(transparent)]
    Engine(#[from] cosine_engine::Error),
    /// A peer engine (RocksDB, WiredTiger, fjall, redb, sled) in its own words, or the harness around it.
    #[error("{0}")]
    Peer(String),
}

impl From<String> for StoreError {
    fn from(message: String) -> Self {
        StoreError::Peer(message)
    }
}

/// A store operation's result.
pub type StoreResult<T> = Result<T, StoreError>;

/// A key-value engine the harness can drive (our engine, or a peer through its adapter).
pub trait Store: Send + Sync {
    /// Name for reports.
    fn name(&self) -> String;
    /// Inserts a new record.
    fn insert(&self, key: &[u8], value: &[u8]) -> StoreResult<()>;
    /// Reads a record.
    fn read(&self, key: &[u8]) -> StoreResult<Option<Vec<u8>>>;
    /// Overwrites a record (a blind write).
    fn update(&self, key: &[u8], value: &[u8]) -> StoreResult<()>;
    /// Reads up to `count` records from `start` in key order: (key, value) pairs.
    fn scan(&self, start: &[u8], count: usize) -> StoreResult<Entries>;
    /// Reads a record and writes back what `f` makes of it, atomically (no other write to the key between).
    fn read_modify_write(
        &self,
        key: &[u8],
        f: &mut dyn FnMut(Option<&[u8]>) -> Vec<u8>,
    ) -> StoreResult<()>;
    /// I/O counters so far.
    fn io(&self) -> Option<IoCounters>;
    /// Read-path blocks the calling thread has read so far, when the engine counts them per thread (lets the
    /// harness attribute I/Os to each operation type exactly).
    fn thread_reads(&self) -> Option<u64> {
        None
    }
    /// Makes everything durable and waits for background work (between load and run).
    fn settle(&self) -> StoreResult<()>;
}

/// The Cosine engine as a [`Store`].
pub struct CosineStore(pub Arc<Engine>);

impl Store for CosineStore {
    fn name(&self) -> String {
        format!(
            "cosine ({})",
            self.0
                .design()
                .class
                .map_or("design".to_string(), |c| format!("{c} design"))
        )
    }
    fn insert(&self, key: &[u8], value: &[u8]) -> StoreResult<()> {
        self.0.put(key, value).map_err(StoreError::from)
    }
    fn read(&self, key: &[u8]) -> StoreResult<Option<Vec<u8>>> {
        self.0.get(key).map_err(StoreError::from)
    }
    fn update(&self, key: &[u8], value: &[u8]) -> StoreResult<()> {
        self.0.put(key, value).map_err(StoreError::from)
    }
    fn scan(&self, start: &[u8], count: usize) -> StoreResult<Entries> {
        self.0
            .scan(start.to_vec().., count)
            .map_err(StoreError::from)
    }
    fn read_modify_write(
        &self,
        key: &[u8],
        f: &mut dyn FnMut(Option<&[u8]>) -> Vec<u8>,
    ) -> StoreResult<()> {
        self.0
            .read_modify_write(key, |old| Some(f(old)))
            .map(|_| ())
            .map_err(StoreError::from)
    }
    fn io(&self) -> Option<IoCounters> {
        let s = self.0.stats();
        let background: u64 = s
            .levels
            .iter()
            .map(|l| l.io.block_writes + l.io.compaction_reads)
            .sum();
        Some(IoCounters {
            reads: s.block_reads() + s.index_reads(),
            background,
        })
    }
    fn thread_reads(&self) -> Option<u64> {
        Some(cosine_engine::thread_read_blocks())
    }
    fn settle(&self) -> StoreResult<()> {
        self.0
            .flush()
            .and_then(|_| self.0.wait_for_compactions())
            .map_err(StoreError::from)
    }
}

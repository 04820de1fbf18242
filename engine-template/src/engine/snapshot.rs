//! Snapshots: one consistent view of the store for reads of many keys.
//!
//! The active buffer changes in place, so a snapshot freezes it (the log rotates, as when it fills) and keeps
//! the frozen buffers and the version of that moment: all immutable, shared, and pinned for as long as the
//! snapshot lives (their files stay open after a compaction removes them). Every write acknowledged before
//! `snapshot()` was called is in it, and no write begun after it returned; a batch is in it whole or not at all.

use super::*;

/// A consistent, read-only view of the store as of [`Engine::snapshot`]. It pins the buffers and files of
/// that moment: memory and disk beyond the design's budget while it lives, as a long-lived snapshot pins
/// versions in RocksDB. Drop it when done: it also holds the store open (its directory stays locked until the
/// last snapshot is dropped, even after `Engine::close`).
pub struct Snapshot {
    inner: Arc<Inner>,
    /// Frozen buffers, newest first.
    buffers: Vec<Arc<Buffer>>,
    version: Arc<Version>,
}

impl Engine {
    /// A consistent view for reads of many keys. It freezes the active buffer when that holds anything (a
    /// small run is flushed from it), so take snapshots for multi-key reads that need them, not per lookup.
    pub fn snapshot(&self) -> Result<Snapshot> {
        let inner = &self.inner;
        inner.check_poisoned()?;
        let mem = inner.state.read().mem.clone();
        // what was acknowledged before this call is in the active buffer or older ones: freeze it
        inner.freeze_when_room(&mem)?;
        // no flush or compaction installs a version while the frozen list and the version are taken, so
        // the two are one cut: each buffer is in one or the other, never both or neither
        let _install = inner.install.lock();
        let (frozen, version) = {
            let s = inner.state.read();
            let frozen: Vec<(Arc<Buffer>, Arc<AtomicUsize>)> = s
                .frozen
                .iter()
                .map(|f| (f.buffer.clone(), f.writers.clone()))
                .collect();
            (frozen, s.version.clone())
        };
        // writers that logged into a frozen buffer finish inserting (microseconds): then it is immutable
        for (_, writers) in &frozen {
            while writers.load(Ordering::SeqCst) > 0 {
                std::thread::yield_now();
            }
        }
        Ok(Snapshot {
            inner: inner.clone(),
            buffers: frozen.into_iter().map(|(b, _)| b).collect(),
            version,
        })
    }
}

impl Snapshot {
    /// The value `key` had when the snapshot was taken.
    pub fn get(&self, key: &[u8]) -> Result<Option<Vec<u8>>> {
        self.inner.lookup(&self.buffers, &self.version, key)
    }

    /// The entries with keys in `range` as of the snapshot, in key order, streamed.
    pub fn range<R: RangeBounds<Vec<u8>>>(&self, range: R) -> Result<Range> {
        self.range_expecting(range, None)
    }

    /// [`Snapshot::range`] for a scan that expects `expect` entries (the readahead's hint).
    fn range_expecting<R: RangeBounds<Vec<u8>>>(
        &self,
        range: R,
        expect: Option<usize>,
    ) -> Result<Range> {
        let start = range.start_bound().map(|k| k.as_slice());
        let end = range.end_bound().map(|k| k.as_slice());
        self.inner
            .range(&self.buffers, &self.version, start, end, 64, expect)
    }

    /// Up to `limit` entries with keys in `range` as of the snapshot, in key order, read ahead as
    /// [`crate::Engine::scan`] reads them.
    pub fn scan<R: RangeBounds<Vec<u8>>>(
        &self,
        range: R,
        limit: usize,
    ) -> Result<Vec<(Vec<u8>, Vec<u8>)>> {
        self.range_expecting(range, Some(limit))?
            .take(limit)
            .collect()
    }
}

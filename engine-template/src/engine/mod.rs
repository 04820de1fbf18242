//! The engine: composes a write buffer, filters, fence pointers and levels into one durable key-value store
//! whose shape a [`Design`] picks.

mod background;
mod counters;
mod memory;
mod open;
mod read;
mod snapshot;
mod write;

pub use read::Range;
pub use snapshot::Snapshot;
use write::check_sizes;

use crate::error::{io, Error, Result};
use crate::manifest::{self, Manifest, RunRecord};
use crate::parts::Parts;
use crate::stats::{LevelStats, MemoryStats, Stats};
use crate::storage::Storage;
use crate::wal::{self, SyncMode, WalRecovery, WalWriter};
use cosine_buffer::{Buffer, WriteBuffer};
use cosine_cache::EntryCache;
use cosine_design::{Design, FilterGranularity, MAX_KEY_BYTES, MAX_VALUE_BYTES};
use cosine_levels::compaction::{self, file_path, Output};
use cosine_levels::merge::{EntryIter, MergeIter, RunIter, Source};
use cosine_levels::planner::{self, Plan, Policy};
use cosine_levels::{IoStats, Run, RunFile, Version, WriterOptions};
use parking_lot::{Condvar, Mutex, RwLock};
use std::collections::HashSet;
use std::ops::{Bound, RangeBounds};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;

/// Runs beyond the design's K (or Z) that level 1 may hold before writers stall for compaction.
const STALL_EXTRA_RUNS: u64 = 4;

/// Most frozen buffers waiting for their flush before writers stall: with the active one, the design's
/// [`Design::WRITE_BUFFERS`] buffers of [`Design::flush_bytes`] each, M_B in all.
const MAX_FROZEN: usize = Design::WRITE_BUFFERS as usize - 1;
/// Stripes of the per-key locks that make read-modify-write atomic.
const KEY_STRIPES: usize = 64;
// Monkey's bits per key are capped when memory is plentiful (the cost model prices the same cap)
use cosine_design::shape::MAX_BITS_PER_KEY;

/// How to open an engine.
#[derive(Clone, Debug, Default)]
pub struct Options {
    /// When the write-ahead log is fsynced.
    pub sync: SyncMode,
    /// Where every file of the engine is written: the file system, or a backend that injects faults in tests.
    pub storage: Storage,
    /// The parts to build the engine from; `None` (the default) takes the design's, [`Parts::of`]. Other parts
    /// run correctly but are not what the cost model priced.
    pub parts: Option<Parts>,
    /// How the opening treats a damaged log: by default it recovers to the point in time before damage that
    /// no later record proves durable, and reports damage one does as corruption ([`WalRecovery`]).
    pub wal_recovery: WalRecovery,
}

impl Options {
    /// Options with `sync` and the real file system.
    pub fn with_sync(sync: SyncMode) -> Self {
        Options {
            sync,
            ..Options::default()
        }
    }
}

/// The two background threads.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Role {
    Flush,
    Compact,
}

impl Role {
    fn name(self) -> &'static str {
        match self {
            Role::Flush => "flush",
            Role::Compact => "compaction",
        }
    }
}

/// What a caught panic said (its message, when it is a string).
fn panic_message(panic: &(dyn std::any::Any + Send)) -> String {
    panic
        .downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| panic.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "a panic without a message".into())
}

struct Frozen {
    buffer: Arc<Buffer>,
    /// Writers still inserting the records they logged before the freeze; the flush waits for them.
    writers: Arc<AtomicUsize>,
    /// Oldest log segment holding this buffer's records.
    first_wal: u64,
}

struct State {
    mem: Arc<Buffer>,
    /// Writers that have logged records for `mem` and are inserting them (outside the writer lock).
    mem_writers: Arc<AtomicUsize>,
    mem_first_wal: u64,
    frozen: Vec<Frozen>, // newest first
    /// The hybrid log's read-only region ([`Parts::read_only_region`]): buffers already flushed into runs,
    /// kept in memory (newest first) to answer lookups, within what M_B leaves beside the mutable region and
    /// the frozen buffers ([`State::fit_read_only`]). A cache of data the runs hold: scans and snapshots read
    /// the runs instead.
    read_only: Vec<Arc<Buffer>>,
    version: Arc<Version>,
    /// Level 1 of `version` lags its design (see [`level1_backlog`]): writers wait.
    backlog: bool,
}

impl State {
    /// What a read sees: the active buffer, the frozen ones (newest first) and the version.
    fn snapshot(&self) -> (Arc<Buffer>, Vec<Arc<Buffer>>, Arc<Version>) {
        (
            self.mem.clone(),
            self.frozen.iter().map(|f| f.buffer.clone()).collect(),
            self.version.clone(),
        )
    }

    /// Heap bytes of every buffer held: the active one, the frozen ones and the read-only region.
    fn buffer_bytes(&self) -> usize {
        self.mem.bytes()
            + self.frozen.iter().map(|f| f.buffer.bytes()).sum::<usize>()
            + self.read_only.iter().map(|b| b.bytes()).sum::<usize>()
    }

    /// Shrinks the read-only region to what M_B leaves beside a full mutable region and the frozen buffers
    /// (`M_B − flush_bytes − frozen`), dropping its oldest records first: whole buffers, then the oldest
    /// entries of the boundary one. Runs when a buffer is frozen (it takes the region's bytes) and when a
    /// flushed one joins the region. The region stays a run of whole buffers, newest first, ending at most
    /// at one trimmed buffer: it never keeps a record older than one it dropped (an older version would answer
    /// for a key whose newer version went). A buffer a reader or snapshot still shares cannot be trimmed in
    /// place; it and every older one are dropped (their records are in the runs).
    fn fit_read_only(&mut self, design: &Design) {
        let frozen: usize = self.frozen.iter().map(|f| f.buffer.bytes()).sum();
        let mut room = (design.read_only_bytes() as usize).saturating_sub(frozen);
        let mut kept = Vec::with_capacity(self.read_only.len());
        for mut b in self.read_only.drain(..) {
            if room == 0 {
                break;
            }
            // a buffer over `room` only by what it overshot its capacity when full (its last entry) is kept
            // whole: the mutable region held the same bytes
            if b.bytes() > room && room < b.capacity() {
                match Arc::get_mut(&mut b) {
                    Some(only) => only.retain_newest(room),
                    None => break,
                }
                // the region ends at a trimmed buffer: an older buffer could hold an older version of a key
                // whose newer one the trim dropped, and would answer for it
                if !b.is_empty() {
                    kept.push(b);
                }
                break;
            }
            room -= b.bytes().min(room);
            kept.push(b);
        }
        self.read_only = kept;
    }

    /// Installs a new version and records whether its level 1 lags the design.
    fn install(&mut self, v: Version, design: &Design, parts: &Parts) {
        self.backlog = level1_backlog(design, parts, &v);
        self.version = Arc::new(v);
    }
}

/// Whether level 1 holds more than `STALL_EXTRA_RUNS` runs beyond what the design allows it, or half again
/// the bytes at which it should have been merged down (its fences would outgrow M_FP and every lookup would
/// pay for the backlog). Computed once per installed version, not per write.
fn level1_backlog(d: &Design, parts: &Parts, v: &Version) -> bool {
    parts.wait_for_level1
        && v.levels.first().is_some_and(|l1| {
            let bytes: u64 = l1
                .runs
                .iter()
                .flat_map(|r| r.files.iter())
                .map(|f| f.meta.size)
                .sum();
            let merge_at = Policy::of(d, 1).capacity(1) * d.merge_threshold;
            l1.runs.len() as u64 > d.hot_runs.max(d.cold_runs) + STALL_EXTRA_RUNS
                || bytes as f64 > 1.5 * merge_at
        })
}

struct Writer {
    wal: WalWriter,
    /// Room for the next log record, kept across writes up to [`SCRATCH_KEPT_BYTES`].
    scratch: Vec<u8>,
}

/// The log record scratch a writer keeps between writes: a batch larger than this encodes into room of its
/// own, handed back when it is logged.
const SCRATCH_KEPT_BYTES: usize = 1 << 20;

struct Inner {
    dir: PathBuf,
    design: Design,
    parts: Parts,
    opts: Options,
    state: RwLock<State>,
    writer: Mutex<Writer>,
    /// Log position known to be fsynced.
    synced_lsn: AtomicU64,
    /// Serialises every fsync of the log (`fsync_log`); taken after the writer lock where both are held.
    sync_lock: Mutex<()>,
    stripes: Vec<Mutex<()>>,
    /// The entry cache of M_BC bytes (None when the design has none): lookups that read a value from the
    /// runs fill it; every write drops its keys once they are in the buffer.
    cache: Option<EntryCache>,
    /// Per stripe: writes logged but not yet in the buffer (waiting for their fsync, or inserting). A
    /// read-modify-write waits for them, so it never reads around a write logged before it.
    pending: Vec<AtomicUsize>,
    seq: AtomicU64,
    /// Highest sequence number whose buffer has been flushed into runs (the manifest's `last_seq`).
    flushed_seq: AtomicU64,
    next_id: AtomicU64,
    stats: Arc<IoStats>,
    user_bytes: AtomicU64,
    work: Mutex<bool>,
    work_cv: Condvar,
    done_cv: Condvar,
    shutdown: AtomicBool,
    poisoned: Mutex<Option<String>>,
    install: Mutex<()>,
    adapted_from: Option<Design>,
    /// The directory's `LOCK` file, held (flock) while the engine is open.
    _lock: Box<dyn std::any::Any + Send + Sync>,
}

/// A durable, concurrent key-value engine shaped by a [`Design`].
///
/// ```
/// use cosine_engine::{Engine, Design};
/// let dir = tempfile::tempdir().unwrap();
/// let design = Design::rocksdb_like(1 << 20, 1 << 20, 1 << 20);
/// let engine = Engine::open(dir.path(), &design).unwrap();
/// engine.put(b"hello", b"world").unwrap();
/// assert_eq!(engine.get(b"hello").unwrap().as_deref(), Some(&b"world"[..]));
/// engine.delete(b"hello").unwrap();
/// assert_eq!(engine.get(b"hello").unwrap(), None);
/// engine.close().unwrap();
/// ```
pub struct Engine {
    inner: Arc<Inner>,
    workers: Mutex<Vec<JoinHandle<()>>>,
}

/// A write buffer of the parts' kind and the design's [`Design::flush_bytes`] heap bytes (half of M_B: the
/// other half is for the buffer being flushed).
fn new_buffer(design: &Design, parts: &Parts) -> Arc<Buffer> {
    let cap = design.flush_bytes().min(usize::MAX as u64) as usize;
    Arc::new(parts.buffer.build(cap))
}

fn parse_id(name: &str, ext: &str) -> Option<u64> {
    name.strip_suffix(ext)?.parse().ok()
}

impl Engine {
    /// Opens (or creates) the database in `dir` with `design`, syncing the log on every write batch
    /// (group commit).
    pub fn open(dir: impl AsRef<Path>, design: &Design) -> Result<Engine> {
        Self::open_with(dir, design, Options::default())
    }

    /// The design the engine runs with.
    pub fn design(&self) -> &Design {
        &self.inner.design
    }

    /// The parts the engine is built from ([`Parts::of`] its design, unless [`Options::parts`] said otherwise).
    pub fn parts(&self) -> &Parts {
        &self.inner.parts
    }

    /// Stores `value` under `key`. Returns once the write is in the log as the sync mode promises; readers
    /// see it from then on, never before.
    pub fn put(&self, key: &[u8], value: &[u8]) -> Result<()> {
        check_sizes(key, Some(value))?;
        self.inner.write(&[(key, Some(value))])
    }

    /// Writes several puts (`Some(value)`) and deletes (`None`) with one log append and one sync: cheaper than
    /// one call each, and all of them are acknowledged together.
    pub fn write_batch(&self, batch: &[(&[u8], Option<&[u8]>)]) -> Result<()> {
        let mut record = wal::BATCH_OVERHEAD;
        for (k, v) in batch {
            check_sizes(k, *v)?;
            record += wal::entry_bytes(k, *v);
        }
        if record > u64::from(u32::MAX) {
            return Err(Error::BatchTooLarge(record));
        }
        self.inner.write(batch)
    }

    /// Removes `key` (a tombstone).
    pub fn delete(&self, key: &[u8]) -> Result<()> {
        check_sizes(key, None)?;
        self.inner.write(&[(key, None)])
    }

    /// The value stored under `key`.
    pub fn get(&self, key: &[u8]) -> Result<Option<Vec<u8>>> {
        if key.len() > MAX_KEY_BYTES as usize {
            return Err(Error::KeyTooLarge(key.len()));
        }
        self.inner.get(key)
    }

    /// Atomically replaces the value of `key` by `f(current)`; `None` from `f` deletes it. Returns the new
    /// value. No other write to `key` can interleave.
    pub fn read_modify_write<F>(&self, key: &[u8], f: F) -> Result<Option<Vec<u8>>>
    where
        F: FnOnce(Option<&[u8]>) -> Option<Vec<u8>>,
    {
        check_sizes(key, None)?;
        let stripe = self.inner.stripe_index(key);
        self.inner.throttle()?;
        let _g = self.inner.lock_settled(stripe);
        let current = self.inner.get_filling(key, false)?;
        let next = f(current.as_deref());
        if let Some(v) = &next {
            check_sizes(key, Some(v))?;
        }
        let batch = [(key, next.as_deref())];
        let logged = self.inner.log(&batch)?;
        self.inner.durable(logged.lsn)?;
        self.inner.insert(&batch, &logged);
        let mem = logged.mem.clone();
        drop(logged);
        drop(_g);
        // durable already: a failed freeze poisons the engine for the next write
        let _ = self.inner.freeze_if_full(&mem);
        Ok(next)
    }

    /// Up to `limit` live entries with keys in `range`, in key order: [`Engine::range`] taken `limit` entries
    /// at a time, each run asking the OS at its first block for the blocks its share of them takes (its entries
    /// over all the runs') instead of growing a readahead window as a stream does.
    pub fn scan<R: RangeBounds<Vec<u8>>>(
        &self,
        range: R,
        limit: usize,
    ) -> Result<Vec<(Vec<u8>, Vec<u8>)>> {
        if limit == 0 {
            return Ok(Vec::new());
        }
        let start = range.start_bound().map(|k| k.as_slice());
        let end = range.end_bound().map(|k| k.as_slice());
        self.inner
            .range_live(start, end, limit, Some(limit))?
            .take(limit)
            .collect()
    }

    /// The live entries with keys in `range`, in key order, streamed: memory stays bounded however long the
    /// range. Every write acknowledged before `range` was called is seen; later writes may or may not be (the
    /// buffers of the moment are read a page at a time), and a batch written meanwhile may show in part. For one
    /// consistent view of many keys use [`Engine::snapshot`]. Like a snapshot, a long-lived range pins the
    /// buffers and files it started with.
    pub fn range<R: RangeBounds<Vec<u8>>>(&self, range: R) -> Result<Range> {
        let start = range.start_bound().map(|k| k.as_slice());
        let end = range.end_bound().map(|k| k.as_slice());
        self.inner.range_live(start, end, 64, None)
    }

    /// Forces the write buffer to disk and waits until every frozen buffer is flushed.
    pub fn flush(&self) -> Result<()> {
        self.inner.check_poisoned()?;
        let mem = self.inner.state.read().mem.clone();
        self.inner.freeze_when_room(&mem)?;
        self.inner.wait_for(|s| s.frozen.is_empty())?;
        Ok(())
    }

    /// Waits until no compaction is pending (the tree matches its design).
    pub fn wait_for_compactions(&self) -> Result<()> {
        self.inner.signal();
        self.inner.wait_for(|s| {
            s.frozen.is_empty() && {
                let p = Policy::of(&self.inner.design, self.inner.hot_levels(&s.version));
                planner::plan(&s.version.levels, &p) == Plan::Nothing
            }
        })
    }

    /// Counters and shape: I/Os per level, filter probes, bytes flushed and compacted, amplification, memory.
    pub fn stats(&self) -> Stats {
        self.inner.stats()
    }

    /// Makes every acknowledged write durable, stops background work and closes the engine.
    pub fn close(self) -> Result<()> {
        self.shutdown()
    }

    fn shutdown(&self) -> Result<()> {
        let poisoned = match &*self.inner.poisoned.lock() {
            Some(m) => Err(Error::Poisoned(m.clone())),
            None => Ok(()),
        };
        let synced = poisoned.and_then(|()| {
            let w = self.inner.writer.lock();
            self.inner.sync_current(&w)
        });
        self.inner.shutdown.store(true, Ordering::SeqCst);
        self.inner.signal();
        // (a thread that panicked outside its work, where nothing caught it, is an error too)
        let mut joined = Ok(());
        for h in std::mem::take(&mut *self.workers.lock()) {
            if let Err(panic) = h.join() {
                joined = Err(Error::BackgroundPanic(
                    "worker",
                    panic_message(panic.as_ref()),
                ));
            }
        }
        synced.and(joined)
    }
}

impl Drop for Engine {
    fn drop(&mut self) {
        let _ = self.shutdown();
    }
}

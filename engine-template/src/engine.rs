//! The engine: composes a write buffer, filters, fence pointers and levels into one durable key-value store
//! whose shape a [`Design`] picks.

use crate::error::{io, Error, Result};
use crate::manifest::{self, Manifest, RunRecord};
use crate::stats::{LevelStats, MemoryStats, Stats};
use crate::storage::Storage;
use crate::wal::{self, SyncMode, WalWriter};
use cosine_buffer::{Buffer, HashLogBuffer, SortedBuffer, WriteBuffer};
use cosine_design::{Design, FilterGranularity, MAX_KEY_BYTES, MAX_VALUE_BYTES};
use cosine_levels::compaction::{self, file_path, Output};
use cosine_levels::merge::{MergeIter, RunIter, Source};
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
/// Cap on Monkey's bits per key when memory is plentiful (FPR ≈ 1e-9).
const MAX_BITS_PER_KEY: f64 = 40.0;

/// How to open an engine.
#[derive(Clone, Debug, Default)]
pub struct Options {
    /// When the write-ahead log is fsynced.
    pub sync: SyncMode,
    /// Where the write-ahead log is written: the file system, or a backend that injects faults in tests.
    pub storage: Storage,
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

    /// Installs a new version and records whether its level 1 lags the design.
    fn install(&mut self, v: Version, design: &Design, lsh: bool) {
        self.backlog = level1_backlog(design, lsh, &v);
        self.version = Arc::new(v);
    }
}

/// Whether level 1 holds more than `STALL_EXTRA_RUNS` runs beyond what the design allows it, or half again
/// the bytes at which it should have been merged down (its fences would outgrow M_FP and every lookup would
/// pay for the backlog). Computed once per installed version, not per write.
fn level1_backlog(d: &Design, lsh: bool, v: &Version) -> bool {
    !lsh && v.levels.first().is_some_and(|l1| {
        let bytes: u64 = l1
            .runs
            .iter()
            .flat_map(|r| r.files.iter())
            .map(|f| f.meta.size)
            .sum();
        let merge_at = (d.size_ratio * d.flush_bytes()) as f64 * d.merge_threshold;
        l1.runs.len() as u64 > d.hot_runs.max(d.cold_runs) + STALL_EXTRA_RUNS
            || bytes as f64 > 1.5 * merge_at
    })
}

struct Writer {
    wal: WalWriter,
    scratch: Vec<u8>,
}

struct Inner {
    dir: PathBuf,
    design: Design,
    lsh: bool,
    opts: Options,
    state: RwLock<State>,
    writer: Mutex<Writer>,
    /// Log position known to be fsynced.
    synced_lsn: AtomicU64,
    /// Serialises every fsync of the log (`fsync_log`); taken after the writer lock where both are held.
    sync_lock: Mutex<()>,
    stripes: Vec<Mutex<()>>,
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
    _lock: std::fs::File,
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

/// Whether the design runs as a log-structured hash table ([`Design::runs_as_lsh`], the one rule the cost model
/// applies too).
fn is_lsh(design: &Design) -> bool {
    design.runs_as_lsh()
}

/// A write buffer of the design's [`Design::flush_bytes`] heap bytes (half of M_B: the other half is for the
/// buffer being flushed).
fn new_buffer(design: &Design, lsh: bool) -> Arc<Buffer> {
    let cap = design.flush_bytes().min(usize::MAX as u64) as usize;
    Arc::new(if lsh {
        Buffer::HashLog(HashLogBuffer::new(cap))
    } else {
        Buffer::Sorted(SortedBuffer::new(cap))
    })
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

    /// Opens with explicit options. A directory created with another design is adapted: existing files keep
    /// their layout and are reshaped by later compactions under the new design ([`Stats::adapted_from`]).
    pub fn open_with(dir: impl AsRef<Path>, design: &Design, opts: Options) -> Result<Engine> {
        design.validate()?;
        let dir = dir.as_ref().to_path_buf();
        if !dir.is_dir() {
            std::fs::create_dir_all(&dir).map_err(io(&dir))?;
            // the new directory's entry must survive a crash too
            if let Some(parent) = dir.parent().filter(|p| !p.as_os_str().is_empty()) {
                opts.storage.sync_dir(parent).map_err(io(parent))?;
            }
        }
        let lock_path = dir.join("LOCK");
        let lock = std::fs::File::options()
            .create(true)
            .truncate(false)
            .write(true)
            .open(&lock_path)
            .map_err(io(&lock_path))?;
        match lock.try_lock() {
            Ok(()) => {}
            Err(std::fs::TryLockError::WouldBlock) => return Err(Error::Locked(dir)),
            Err(std::fs::TryLockError::Error(e)) => {
                return Err(Error::Io {
                    path: lock_path,
                    source: e,
                })
            }
        }
        let stored = manifest::load(&dir)?;
        let stats = Arc::new(IoStats::default());
        let lsh = is_lsh(design);
        // ids in use on disk, so that new files never collide with leftovers
        let mut max_id = 0u64;
        let mut wal_ids = Vec::new();
        let mut run_ids = Vec::new();
        for entry in std::fs::read_dir(&dir).map_err(io(&dir))? {
            let entry = entry.map_err(io(&dir))?;
            let name = entry.file_name().to_string_lossy().into_owned();
            if let Some(id) = parse_id(&name, ".wal") {
                wal_ids.push(id);
                max_id = max_id.max(id);
            } else if let Some(id) = parse_id(&name, ".run") {
                run_ids.push(id);
                max_id = max_id.max(id);
            }
        }
        wal_ids.sort_unstable();
        let (mut version, last_seq, log_number, next_id, adapted_from) = match &stored {
            Some(m) => {
                let mut levels = Vec::new();
                for runs in &m.levels {
                    let mut level = cosine_levels::Level::default();
                    for r in runs {
                        let mut files = Vec::new();
                        for id in &r.files {
                            files.push(Arc::new(RunFile::open(&file_path(&dir, *id), *id)?));
                        }
                        level.runs.push(Arc::new(Run { id: r.id, files }));
                    }
                    levels.push(level);
                }
                let adapted = (m.design != *design).then(|| m.design.clone());
                (
                    Version { levels },
                    m.last_seq,
                    m.log_number,
                    m.next_id.max(max_id + 1),
                    adapted,
                )
            }
            None => (Version::default(), 0, 0, max_id + 1, None),
        };
        version.trim();
        // files of a compaction or flush that never reached the manifest
        let live: HashSet<u64> = version.files().map(|(_, f)| f.id).collect();
        for id in run_ids {
            if !live.contains(&id) {
                let _ = std::fs::remove_file(file_path(&dir, id));
            }
        }
        // replay the log into a buffer
        let mem = new_buffer(design, lsh);
        let mut seq = last_seq;
        let live_wals: Vec<u64> = wal_ids
            .iter()
            .copied()
            .filter(|id| *id >= log_number)
            .collect();
        for (i, id) in live_wals.iter().enumerate() {
            for rec in wal::replay(&dir, *id, i + 1 == live_wals.len())? {
                if rec.seq > last_seq {
                    mem.insert(rec.key, rec.seq, rec.value);
                }
                seq = seq.max(rec.seq);
            }
        }
        // what replay serves must be durable before anyone reads it: records a killed process had written but
        // not yet fsynced are fsynced now
        for id in &live_wals {
            let path = wal::segment_path(&dir, *id);
            opts.storage
                .open_log(&path)
                .and_then(|f| f.sync())
                .map_err(io(&path))?;
        }
        for id in wal_ids.iter().filter(|id| **id < log_number) {
            let _ = std::fs::remove_file(wal::segment_path(&dir, *id));
        }
        let next = AtomicU64::new(next_id);
        let wal_id = next.fetch_add(1, Ordering::SeqCst);
        let wal = WalWriter::create(&opts.storage, &dir, wal_id, 0)?;
        let mem_first_wal = live_wals.first().copied().unwrap_or(wal_id);
        let inner = Arc::new(Inner {
            dir: dir.clone(),
            design: design.clone(),
            lsh,
            opts,
            state: RwLock::new(State {
                mem,
                mem_writers: Arc::new(AtomicUsize::new(0)),
                mem_first_wal,
                frozen: Vec::new(),
                backlog: level1_backlog(design, lsh, &version),
                version: Arc::new(version),
            }),
            writer: Mutex::new(Writer {
                wal,
                scratch: Vec::new(),
            }),
            synced_lsn: AtomicU64::new(0),
            sync_lock: Mutex::new(()),
            stripes: (0..KEY_STRIPES).map(|_| Mutex::new(())).collect(),
            pending: (0..KEY_STRIPES).map(|_| AtomicUsize::new(0)).collect(),
            seq: AtomicU64::new(seq),
            flushed_seq: AtomicU64::new(last_seq),
            next_id: next,
            stats,
            user_bytes: AtomicU64::new(0),
            work: Mutex::new(false),
            work_cv: Condvar::new(),
            done_cv: Condvar::new(),
            shutdown: AtomicBool::new(false),
            poisoned: Mutex::new(None),
            install: Mutex::new(()),
            adapted_from,
            _lock: lock,
        });
        // record the (possibly new) design and make the residency of every file match it
        {
            let v = inner.state.read().version.clone();
            inner.set_residency(&v)?;
            inner.write_manifest(&v, inner.state.read().mem_first_wal)?;
        }
        let mut workers = Vec::new();
        for (role, name) in [
            (Role::Flush, "cosine-flush"),
            (Role::Compact, "cosine-compaction"),
        ] {
            let bg = inner.clone();
            workers.push(
                std::thread::Builder::new()
                    .name(name.into())
                    .spawn(move || bg.background(role))
                    .map_err(io(&dir))?,
            );
        }
        let engine = Engine {
            inner,
            workers: Mutex::new(workers),
        };
        if engine.inner.state.read().mem.is_full() {
            engine.inner.freeze(&mut engine.inner.writer.lock())?;
        }
        Ok(engine)
    }

    /// The design the engine runs with.
    pub fn design(&self) -> &Design {
        &self.inner.design
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
        for (k, v) in batch {
            check_sizes(k, *v)?;
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
        let current = self.inner.get(key)?;
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

    /// Up to `limit` live entries with keys in `range`, in key order.
    pub fn scan<R: RangeBounds<Vec<u8>>>(
        &self,
        range: R,
        limit: usize,
    ) -> Result<Vec<(Vec<u8>, Vec<u8>)>> {
        let start = range.start_bound().map(|k| k.as_slice());
        let end = range.end_bound().map(|k| k.as_slice());
        self.inner.scan(start, end, limit)
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
                planner::plan(&compaction::view(&s.version), &p) == Plan::Nothing
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
        for h in std::mem::take(&mut *self.workers.lock()) {
            let _ = h.join();
        }
        synced
    }
}

impl Drop for Engine {
    fn drop(&mut self) {
        let _ = self.shutdown();
    }
}

/// A write's mark on its stripes' pending counts, from its log append to the end of its buffer insert (or its
/// failure); removed when dropped, also if the write panics.
struct PendingOn<'a> {
    counts: &'a [AtomicUsize],
    stripes: &'a [usize],
}

impl<'a> PendingOn<'a> {
    fn mark(counts: &'a [AtomicUsize], stripes: &'a [usize]) -> Self {
        for i in stripes {
            counts[*i].fetch_add(1, Ordering::SeqCst);
        }
        PendingOn { counts, stripes }
    }
}

impl Drop for PendingOn<'_> {
    fn drop(&mut self) {
        for i in self.stripes {
            self.counts[*i].fetch_sub(1, Ordering::SeqCst);
        }
    }
}

/// A batch in the log on its way into the buffer.
struct Logged {
    /// Log position to be durable before the batch is acknowledged.
    lsn: u64,
    /// Sequence number of the batch's first entry.
    first: u64,
    /// The buffer the batch belongs to (the active one when it was logged).
    mem: Arc<Buffer>,
    _inserting: Inserting,
}

/// A writer between its log append and the end of its buffer inserts: counted on the buffer's writer count
/// while alive (also if the insert panics), so the buffer's flush waits for it.
struct Inserting(Arc<AtomicUsize>);

impl Inserting {
    fn start(writers: Arc<AtomicUsize>) -> Self {
        writers.fetch_add(1, Ordering::SeqCst);
        Inserting(writers)
    }
}

impl Drop for Inserting {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::SeqCst);
    }
}

/// Where fence pointers live: how many levels count as hot, and per level how many of its newest runs keep
/// their fences and filters in memory.
struct Residency {
    hot_levels: usize,
    resident_runs: Vec<usize>,
    /// The first run that did not fit whole: (level index, run index, its leading files that do fit). A
    /// level's last run is often most of the data; keeping part of its fences in memory saves the index
    /// block on that part of the lookups, instead of none.
    partial: Option<(usize, usize, usize)>,
}

/// Pages through a live buffer in key order for a scan: it copies a chunk of entries at a time (first the
/// scan's limit, doubling when tombstones or newer runs make the merge ask for more), never the whole buffer.
struct BufferCursor {
    buffer: Arc<Buffer>,
    next: Bound<Vec<u8>>,
    end: Bound<Vec<u8>>,
    chunk: std::vec::IntoIter<(Vec<u8>, u64, Option<Vec<u8>>)>,
    batch: usize,
    exhausted: bool,
}

impl BufferCursor {
    fn new(buffer: Arc<Buffer>, start: Bound<&[u8]>, end: Bound<&[u8]>, limit: usize) -> Self {
        BufferCursor {
            buffer,
            next: start.map(<[u8]>::to_vec),
            end: end.map(<[u8]>::to_vec),
            chunk: Vec::new().into_iter(),
            batch: limit.saturating_add(1).max(16),
            exhausted: false,
        }
    }
}

impl Iterator for BufferCursor {
    type Item = (Vec<u8>, u64, Option<Vec<u8>>);

    fn next(&mut self) -> Option<Self::Item> {
        if let Some(e) = self.chunk.next() {
            return Some(e);
        }
        if self.exhausted {
            return None;
        }
        let got = self
            .buffer
            .range(borrowed(&self.next), borrowed(&self.end), self.batch);
        self.exhausted = got.len() < self.batch;
        self.batch = self.batch.saturating_mul(2);
        if let Some(last) = got.last() {
            self.next = Bound::Excluded(last.0.clone());
        }
        self.chunk = got.into_iter();
        self.chunk.next()
    }
}

fn borrowed(b: &Bound<Vec<u8>>) -> Bound<&[u8]> {
    match b {
        Bound::Included(k) => Bound::Included(k.as_slice()),
        Bound::Excluded(k) => Bound::Excluded(k.as_slice()),
        Bound::Unbounded => Bound::Unbounded,
    }
}

fn check_sizes(key: &[u8], value: Option<&[u8]>) -> Result<()> {
    if key.len() > MAX_KEY_BYTES as usize {
        return Err(Error::KeyTooLarge(key.len()));
    }
    if let Some(v) = value {
        if v.len() as u64 > MAX_VALUE_BYTES {
            return Err(Error::ValueTooLarge(v.len()));
        }
    }
    Ok(())
}

impl Inner {
    fn stripe_index(&self, key: &[u8]) -> usize {
        (cosine_fence_pointers::stable_hash(key) % KEY_STRIPES as u64) as usize
    }

    fn check_poisoned(&self) -> Result<()> {
        if self.shutdown.load(Ordering::SeqCst) {
            return Err(Error::Closed);
        }
        match &*self.poisoned.lock() {
            Some(m) => Err(Error::Poisoned(m.clone())),
            None => Ok(()),
        }
    }

    fn poison(&self, e: &Error) {
        let mut p = self.poisoned.lock();
        if p.is_none() {
            *p = Some(e.to_string());
        }
        self.done_cv.notify_all();
    }

    fn signal(&self) {
        *self.work.lock() = true;
        self.work_cv.notify_all();
    }

    /// Whether writers must wait: the active buffer full (until it is frozen, which waits for the frozen
    /// one's flush: M_B is spent), or level 1 lagging its design. Writes go on into the active buffer during
    /// a flush.
    fn stalled(&self, s: &State) -> bool {
        // a full active buffer takes nothing more until it is frozen (its writer freezes it at once when no
        // frozen buffer is left, else after that one's flush)
        (s.mem.is_full() && !s.mem.is_empty()) || s.backlog
    }

    /// The sorted, distinct stripes of a batch's keys.
    fn stripes_of(&self, batch: &[(&[u8], Option<&[u8]>)]) -> Vec<usize> {
        let mut stripes: Vec<usize> = batch.iter().map(|(k, _)| self.stripe_index(k)).collect();
        stripes.sort_unstable();
        stripes.dedup();
        stripes
    }

    /// A write: log the batch under its keys' stripe locks, wait for the sync mode's durability without
    /// them (concurrent writers share one fsync), then insert it into the buffer, where readers see it.
    fn write(&self, batch: &[(&[u8], Option<&[u8]>)]) -> Result<()> {
        if batch.is_empty() {
            return self.check_poisoned();
        }
        self.throttle()?;
        let stripes = self.stripes_of(batch);
        let lock = || -> Vec<_> { stripes.iter().map(|i| self.stripes[*i].lock()).collect() };
        let (logged, pending) = {
            let _guards = lock();
            let logged = self.log(batch)?;
            (logged, PendingOn::mark(&self.pending, &stripes))
        };
        let durable = self.durable(logged.lsn);
        if durable.is_ok() {
            let _guards = lock();
            self.insert(batch, &logged);
        }
        drop(pending);
        let mem = logged.mem.clone();
        drop(logged);
        durable?;
        // the write is durable and acknowledged whatever happens now; a failed freeze poisons the engine
        // and the next write reports it
        let _ = self.freeze_if_full(&mem);
        Ok(())
    }

    /// Back-pressure, before a writer takes any lock: wait while too many buffers wait for their flush, or
    /// while level 1 holds more runs than compaction keeps up with (every lookup would probe them all). A
    /// writer never waits here holding a stripe: a flush waits for the writers of its buffer, and they may
    /// need that stripe to insert.
    fn throttle(&self) -> Result<()> {
        if self.stalled(&self.state.read()) {
            self.signal();
            self.wait_for(|s| !self.stalled(s))?;
        }
        Ok(())
    }

    /// Locks stripe `i` once no write logged under it is still on its way into the buffer (read-modify-write
    /// must read the newest logged value). Writes log under the stripe lock, so none can start meanwhile.
    fn lock_settled(&self, i: usize) -> parking_lot::MutexGuard<'_, ()> {
        loop {
            let g = self.stripes[i].lock();
            if self.pending[i].load(Ordering::SeqCst) == 0 {
                return g;
            }
            drop(g);
            std::thread::sleep(std::time::Duration::from_micros(20));
        }
    }

    /// Appends a batch to the log (the caller holds the keys' stripe locks): one `write` to the OS, and an
    /// fsync under [`SyncMode::Always`]. Returns where the batch goes: the log position to wait for with
    /// `durable`, its first sequence number and the buffer it belongs to.
    fn log(&self, batch: &[(&[u8], Option<&[u8]>)]) -> Result<Logged> {
        self.check_poisoned()?;
        // Under the writer lock: sequence numbers and the log record, so the log's order is the sequence
        // order, and a note on the buffer those records belong to. The buffer inserts happen after the lock
        // is released, so writers on several cores fill the buffer in parallel (the stripe locks keep one
        // key's versions in order); a freeze meanwhile leaves them inserting into the buffer their records
        // were logged for, and its flush waits for them.
        let mut w = self.writer.lock();
        // checked under the writer lock: no record follows one whose write or fsync failed
        self.check_poisoned()?;
        let mut rec = std::mem::take(&mut w.scratch);
        rec.clear();
        let first = self.seq.fetch_add(batch.len() as u64, Ordering::SeqCst) + 1;
        for (i, (key, value)) in batch.iter().enumerate() {
            wal::encode(
                value.is_some(),
                first + i as u64,
                key,
                value.unwrap_or(&[]),
                &mut rec,
            );
        }
        let appended = w.wal.append(&rec);
        w.scratch = rec;
        if let Err(e) = appended {
            self.poison(&e);
            return Err(e);
        }
        if self.opts.sync == SyncMode::Always {
            self.sync_current(&w)?;
        }
        let s = self.state.read();
        Ok(Logged {
            lsn: w.wal.lsn,
            first,
            mem: s.mem.clone(),
            _inserting: Inserting::start(s.mem_writers.clone()),
        })
    }

    /// Inserts a logged batch into its buffer (the caller holds the keys' stripe locks). A version older
    /// than the one the buffer holds is skipped: writers of one key may finish their fsync in any order.
    fn insert(&self, batch: &[(&[u8], Option<&[u8]>)], logged: &Logged) {
        for (i, (key, value)) in batch.iter().enumerate() {
            logged.mem.insert(
                key.to_vec(),
                logged.first + i as u64,
                value.map(|v| v.to_vec()),
            );
            self.user_bytes.fetch_add(
                (key.len() + value.map_or(0, |v| v.len())) as u64,
                Ordering::Relaxed,
            );
        }
    }

    /// Freezes `mem` if it is full and still the active buffer.
    /// Freezes `mem` once it is full and still the active buffer, after waiting for the frozen one's flush
    /// if there is one (the two share M_B).
    fn freeze_if_full(&self, mem: &Arc<Buffer>) -> Result<()> {
        if mem.is_full() {
            self.freeze_when_room(mem)?;
        }
        Ok(())
    }

    /// Waits until fewer than `MAX_FROZEN` buffers are frozen, then freezes `mem` if it is still the active
    /// buffer and holds anything.
    fn freeze_when_room(&self, mem: &Arc<Buffer>) -> Result<()> {
        loop {
            {
                let s = self.state.read();
                // another writer froze it already: nothing to wait for
                if !Arc::ptr_eq(&s.mem, mem) || mem.is_empty() {
                    return Ok(());
                }
            }
            if self.state.read().frozen.len() >= MAX_FROZEN {
                self.signal();
                self.wait_for(|s| s.frozen.len() < MAX_FROZEN)?;
            }
            let mut w = self.writer.lock();
            let s = self.state.read();
            // another writer may have frozen it already, or frozen another buffer meanwhile
            if !Arc::ptr_eq(&s.mem, mem) || mem.is_empty() {
                return Ok(());
            }
            if s.frozen.len() < MAX_FROZEN {
                drop(s);
                return self.freeze(&mut w);
            }
        }
    }

    /// Waits until the log is durable up to `lsn` (group commit in batch mode; nothing to do otherwise).
    fn durable(&self, lsn: u64) -> Result<()> {
        if self.opts.sync == SyncMode::Batch && lsn > 0 {
            self.sync_to(lsn)?;
        }
        Ok(())
    }

    /// Group commit: one fsync covers every record appended before it started. Once an fsync has failed
    /// the engine is poisoned and no later write is acknowledged.
    fn sync_to(&self, lsn: u64) -> Result<()> {
        if self.synced_lsn.load(Ordering::SeqCst) >= lsn {
            return Ok(());
        }
        // the handle under the writer lock, released before the fsync lock: other writers append meanwhile
        let (file, path, upto) = {
            let w = self.writer.lock();
            let (f, p) = w.wal.sync_handle();
            (f, p, w.wal.lsn)
        };
        self.fsync_log(&*file, &path, upto, lsn)
    }

    /// Every fsync of the log runs here, one at a time under `sync_lock`, and publishes `upto` as durable
    /// only if no fsync has failed before or during it: Linux reports a failed write-back once, so a later
    /// fsync of the same file can succeed although the pages it covered were lost. Returns at once when an
    /// earlier fsync already covered `need`.
    fn fsync_log(
        &self,
        file: &dyn crate::storage::LogFile,
        path: &Path,
        upto: u64,
        need: u64,
    ) -> Result<()> {
        let _serial = self.sync_lock.lock();
        if self.synced_lsn.load(Ordering::SeqCst) >= need {
            return Ok(());
        }
        self.check_poisoned()?;
        if let Err(source) = file.sync() {
            let e = Error::Io {
                path: path.to_path_buf(),
                source,
            };
            self.poison(&e);
            return Err(e);
        }
        self.synced_lsn.fetch_max(upto, Ordering::SeqCst);
        Ok(())
    }

    /// fsyncs the current segment (the caller holds the writer lock, so `upto` is all that was appended).
    fn sync_current(&self, w: &Writer) -> Result<()> {
        let (file, path) = w.wal.sync_handle();
        self.fsync_log(&*file, &path, w.wal.lsn, w.wal.lsn)
    }

    /// Freezes the buffer: the log rotates to a new segment (the old one fsynced), the buffer joins the
    /// frozen list, and the background thread is woken to flush it.
    /// A failure poisons the engine: the log could not be made durable or rotated.
    fn freeze(&self, w: &mut Writer) -> Result<()> {
        let id = self.next_id.fetch_add(1, Ordering::SeqCst);
        let lsn = w.wal.lsn;
        let rotated = self
            .sync_current(w)
            .and_then(|()| WalWriter::create(&self.opts.storage, &self.dir, id, lsn));
        w.wal = match rotated {
            Ok(next) => next,
            Err(e) => {
                self.poison(&e);
                return Err(e);
            }
        };
        self.synced_lsn.fetch_max(lsn, Ordering::SeqCst);
        let mut s = self.state.write();
        let old = std::mem::replace(&mut s.mem, new_buffer(&self.design, self.lsh));
        let writers = std::mem::replace(&mut s.mem_writers, Arc::new(AtomicUsize::new(0)));
        let first = std::mem::replace(&mut s.mem_first_wal, id);
        s.frozen.insert(
            0,
            Frozen {
                buffer: old,
                writers,
                first_wal: first,
            },
        );
        drop(s);
        self.signal();
        // writers waiting for the full buffer to be frozen
        let _g = self.work.lock();
        self.done_cv.notify_all();
        Ok(())
    }

    fn wait_for(&self, ready: impl Fn(&State) -> bool) -> Result<()> {
        let mut g = self.work.lock();
        loop {
            if ready(&self.state.read()) {
                return Ok(());
            }
            if let Some(m) = &*self.poisoned.lock() {
                return Err(Error::Poisoned(m.clone()));
            }
            if self.shutdown.load(Ordering::SeqCst) {
                return Err(Error::Closed);
            }
            *g = true;
            self.work_cv.notify_all();
            self.done_cv
                .wait_for(&mut g, std::time::Duration::from_millis(50));
        }
    }

    fn get(&self, key: &[u8]) -> Result<Option<Vec<u8>>> {
        let (mem, frozen, version) = self.state.read().snapshot();
        if let Some((_, v)) = mem.get(key) {
            return Ok(v);
        }
        for b in &frozen {
            if let Some((_, v)) = b.get(key) {
                return Ok(v);
            }
        }
        for (i, level) in version.levels.iter().enumerate() {
            for run in &level.runs {
                if let Some(f) = run.file_for(key) {
                    if let Some((_, v)) = f.get(key, &self.stats, i + 1)? {
                        return Ok(v);
                    }
                }
            }
        }
        Ok(None)
    }

    fn scan(
        &self,
        start: Bound<&[u8]>,
        end: Bound<&[u8]>,
        limit: usize,
    ) -> Result<Vec<(Vec<u8>, Vec<u8>)>> {
        if limit == 0 {
            return Ok(Vec::new());
        }
        let (mem, frozen, version) = self.state.read().snapshot();
        let seek = match start {
            Bound::Included(k) | Bound::Excluded(k) => Some(k),
            Bound::Unbounded => None,
        };
        let mut sources = vec![Source::Lazy(Box::new(BufferCursor::new(
            mem, start, end, limit,
        )))];
        for b in frozen {
            sources.push(Source::Lazy(Box::new(BufferCursor::new(
                b, start, end, limit,
            ))));
        }
        for (i, level) in version.levels.iter().enumerate() {
            for run in &level.runs {
                sources.push(Source::Run(RunIter::new(
                    run.files.clone(),
                    seek,
                    Some((self.stats.clone(), i + 1, false)),
                )));
            }
        }
        let mut merge = MergeIter::new(sources)?;
        let mut out = Vec::new();
        while let Some((k, _, v)) = merge.next_entry()? {
            let after_start = match start {
                Bound::Excluded(s) => k.as_slice() > s,
                _ => true,
            };
            let before_end = match end {
                Bound::Included(e) => k.as_slice() <= e,
                Bound::Excluded(e) => k.as_slice() < e,
                Bound::Unbounded => true,
            };
            if !before_end {
                break;
            }
            if let (true, Some(v)) = (after_start, v) {
                out.push((k, v));
                if out.len() >= limit {
                    break;
                }
            }
        }
        Ok(out)
    }

    /// Which runs keep their fence pointers (and filters) in memory: walking the levels from the top and each
    /// level's runs newest first, every run whose fences fit in what M_FP has left, up to the first that does
    /// not. A level outgrowing its share between merges so loses only its oldest runs' fences, not all of
    /// them. Hot levels (for the planner's K and Z) are the levels that keep at least one run resident.
    fn residency(&self, v: &Version) -> Residency {
        let mut resident_runs = vec![0; v.levels.len()];
        // newest runs first, while their fences (a hash index, for LSH files) fit M_FP; the rest are cold and
        // reached through their on-disk index blocks. An LSH run past M_FP costs an index block and a data
        // block per lookup that reaches it (no filter skips it); the cost model charges that
        // (`DistributionAware`'s cold LSH runs), and the search reserves M_FP for every key's index entry.
        // (every file's top index, one fence per index block, about 1% of its fences, stays in memory hot or
        // cold; like the cost model, residency does not weigh it)
        let mut left = self.design.fence_bytes;
        for (i, level) in v.levels.iter().enumerate() {
            for (j, run) in level.runs.iter().enumerate() {
                let need: u64 = run.files.iter().map(|f| f.meta.fence_bytes).sum();
                if need > left {
                    let hot_levels = i + usize::from(resident_runs[i] > 0);
                    // the files of this run that still fit, in key order
                    let fit = run
                        .files
                        .iter()
                        .scan(left, |room, f| {
                            (f.meta.fence_bytes <= *room).then(|| *room -= f.meta.fence_bytes)
                        })
                        .count();
                    return Residency {
                        hot_levels,
                        resident_runs,
                        partial: (fit > 0).then_some((i, j, fit)),
                    };
                }
                left -= need;
                resident_runs[i] += 1;
            }
        }
        Residency {
            hot_levels: v.levels.len().max(1) + 8,
            resident_runs,
            partial: None,
        }
    }

    /// Levels that keep fences in memory, counted from the top (the rest are cold and hold up to Z runs).
    fn hot_levels(&self, v: &Version) -> usize {
        self.residency(v).hot_levels
    }

    fn set_residency(&self, v: &Version) -> Result<()> {
        let r = self.residency(v);
        let filters = self.design.filter_bytes > 0 && !self.lsh;
        for (i, (level, resident)) in v.levels.iter().zip(&r.resident_runs).enumerate() {
            for (j, run) in level.runs.iter().enumerate() {
                for (k, f) in run.files.iter().enumerate() {
                    let in_budget = j < *resident
                        || r.partial
                            .is_some_and(|(pi, pj, n)| (pi, pj) == (i, j) && k < n);
                    // files of an LSH design without a hash index (written by another design before an
                    // adaptation) stay cold
                    let hot = in_budget && (!self.lsh || f.has_hash_index());
                    f.set_residency(hot, filters)?;
                }
            }
        }
        Ok(())
    }

    /// Writer options for files of `level`: Monkey's bits per key for that level given the data so far (plus
    /// `extra_entries` and `extra_bytes` not yet in `v`). With `replacing` = (files, entries), a compaction's
    /// output, the bits are capped so that the filters held in memory stay within M_BF once `entries` entries
    /// replace `files`. A flush (`None`) always gets its level's Monkey bits: starving the newest, smallest
    /// runs would invert Monkey (they deserve the most bits per key, and every lookup probes them first); the
    /// deeper levels absorb any overdraft until they are rewritten.
    fn writer_options(
        &self,
        v: &Version,
        level: usize,
        extra_entries: u64,
        extra_bytes: u64,
        replacing: Option<(&HashSet<u64>, u64)>,
    ) -> WriterOptions {
        let d = &self.design;
        let entries = (v.entries() + extra_entries).max(1);
        let bytes = v.bytes() + extra_bytes;
        let entry_bytes = (bytes as f64 / entries as f64).max(1.0);
        let levels = cosine_cost_model::layout::level_count(
            entries as f64,
            entry_bytes,
            d.flush_bytes() as f64,
            d.size_ratio as f64,
        )
        .max(v.depth() as u32)
        .max(level as u32)
        .max(1);
        let bits = if d.filter_bytes == 0 || self.lsh {
            0.0
        } else {
            let per_level = cosine_filters::bits_per_key_per_level(
                d.filter_bytes,
                entries as f64,
                levels,
                d.size_ratio as f64,
                d.hot_runs as f64,
                d.cold_runs as f64,
            );
            let cap = replacing.map_or(f64::INFINITY, |(replaced, new_entries)| {
                let held: usize = v
                    .files()
                    .filter(|(_, f)| !replaced.contains(&f.id))
                    .map(|(_, f)| f.memory_bytes().1)
                    .sum();
                // each output file's filter also carries its fixed overhead (about as many files out as in)
                let overhead = replaced.len() * cosine_filters::FILTER_OVERHEAD_BYTES;
                8.0 * (d.filter_bytes as f64 - held as f64 - overhead as f64).max(0.0)
                    / new_entries.max(1) as f64
            });
            per_level
                .get(level - 1)
                .copied()
                .unwrap_or(0.0)
                .min(MAX_BITS_PER_KEY)
                .min(cap)
        };
        WriterOptions {
            block_bytes: d.block_bytes as usize,
            bits_per_key: bits,
            granularity: d.filter_granularity,
            hash_index: self.lsh,
        }
    }

    /// Threads one compaction's merge uses (`Design.threads`; 0 = one per core): a merge large enough is cut
    /// into that many key ranges merged side by side (subcompactions), beside the flush thread.
    fn compaction_threads(&self) -> usize {
        match self.design.threads {
            0 => std::thread::available_parallelism().map_or(1, |n| n.get()),
            n => n as usize,
        }
    }

    /// Bytes per output file: the design's, except that a run-granularity filter needs the whole run in one
    /// file. Without filters (LSH designs) files stay bounded, and so does what writing one holds in memory
    /// (its fences and hash-index entries until the file is finished).
    fn file_bytes(&self) -> u64 {
        let filtered = self.design.filter_bytes > 0 && !self.lsh;
        if filtered && self.design.filter_granularity == FilterGranularity::Run {
            u64::MAX
        } else {
            self.design.file_bytes
        }
    }

    fn write_manifest(&self, v: &Version, log_number: u64) -> Result<()> {
        let m = Manifest {
            format: manifest::MANIFEST_FORMAT,
            design: self.design.clone(),
            next_id: self.next_id.load(Ordering::SeqCst),
            last_seq: self.flushed_seq.load(Ordering::SeqCst),
            log_number,
            levels: v
                .levels
                .iter()
                .map(|l| {
                    l.runs
                        .iter()
                        .map(|r| RunRecord {
                            id: r.id,
                            files: r.files.iter().map(|f| f.id).collect(),
                        })
                        .collect()
                })
                .collect(),
        };
        manifest::store(&self.dir, &m)
    }

    /// Whether a background role has something to do.
    fn has_work(&self, role: Role) -> bool {
        let s = self.state.read();
        match role {
            Role::Flush => !s.frozen.is_empty(),
            Role::Compact => {
                planner::plan(
                    &compaction::view(&s.version),
                    &Policy::of(&self.design, self.hot_levels(&s.version)),
                ) != Plan::Nothing
            }
        }
    }

    /// A background thread: the flusher writes frozen buffers to level 1; the compactor reshapes the tree.
    /// They run side by side, so a long merge never holds up a flush (and so the writers).
    fn background(self: Arc<Self>, role: Role) {
        loop {
            {
                let mut g = self.work.lock();
                if !self.shutdown.load(Ordering::SeqCst) && !self.has_work(role) {
                    self.work_cv
                        .wait_for(&mut g, std::time::Duration::from_millis(20));
                }
            }
            if self.shutdown.load(Ordering::SeqCst) {
                return;
            }
            if self.poisoned.lock().is_some() {
                std::thread::sleep(std::time::Duration::from_millis(20));
                continue;
            }
            let result = match role {
                Role::Flush => self.flush_all(),
                Role::Compact => self.compact_all(),
            };
            if let Err(e) = result {
                self.poison(&e);
            }
            let _g = self.work.lock();
            self.done_cv.notify_all();
        }
    }

    fn flush_all(&self) -> Result<()> {
        // flush frozen buffers, oldest first
        loop {
            let oldest = self
                .state
                .read()
                .frozen
                .last()
                .map(|f| (f.buffer.clone(), f.writers.clone()));
            let Some((buffer, writers)) = oldest else {
                return Ok(());
            };
            // writers that logged into this buffer before it froze finish their inserts (microseconds)
            while writers.load(Ordering::SeqCst) > 0 {
                std::thread::yield_now();
            }
            self.flush_buffer(&buffer)?;
            // the buffer's last holder may be this thread: drop it, then hand its pages back
            drop(buffer);
            crate::heap::release_freed();
            let _g = self.work.lock();
            self.done_cv.notify_all();
            self.work_cv.notify_all();
        }
    }

    fn compact_all(&self) -> Result<()> {
        // compact until the tree matches its design
        while !self.shutdown.load(Ordering::SeqCst) {
            let v = self.state.read().version.clone();
            let plan = planner::plan(
                &compaction::view(&v),
                &Policy::of(&self.design, self.hot_levels(&v)),
            );
            if plan == Plan::Nothing {
                break;
            }
            self.compact(&v, &plan)?;
            let _g = self.work.lock();
            self.done_cv.notify_all();
        }
        Ok(())
    }

    fn flush_buffer(&self, buffer: &Arc<Buffer>) -> Result<()> {
        let v = self.state.read().version.clone();
        let opts = self.writer_options(&v, 1, buffer.len() as u64, buffer.bytes() as u64, None);
        let out = Output {
            dir: &self.dir,
            next_id: &self.next_id,
            writer: opts,
            file_bytes: self.file_bytes(),
            stats: &self.stats,
            level: 1,
            threads: 1,
        };
        // stream the buffer in key order: a flush never copies it whole
        let mut it = buffer.sorted_iter();
        let mut max_seq = 0;
        let (files, bytes) = compaction::write_entries(
            || {
                let e = it.next();
                if let Some((_, seq, _)) = &e {
                    max_seq = max_seq.max(*seq);
                }
                Ok(e)
            },
            false,
            &out,
        )?;
        drop(it);
        self.stats.bytes_flushed.fetch_add(bytes, Ordering::Relaxed);
        let _install = self.install.lock();
        let mut nv = (*self.state.read().version).clone();
        if nv.levels.is_empty() {
            nv.levels.push(Default::default());
        }
        if !files.is_empty() {
            nv.levels[0].runs.insert(
                0,
                Arc::new(Run {
                    id: self.next_id.fetch_add(1, Ordering::SeqCst),
                    files,
                }),
            );
        }
        self.set_residency(&nv)?;
        self.flushed_seq.fetch_max(max_seq, Ordering::SeqCst);
        let log_number = {
            let s = self.state.read();
            // the buffer being flushed is the oldest frozen one; the next oldest still needs its segments
            s.frozen
                .iter()
                .rev()
                .nth(1)
                .map(|f| f.first_wal)
                .unwrap_or(s.mem_first_wal)
        };
        self.write_manifest(&nv, log_number)?;
        {
            let mut s = self.state.write();
            s.install(nv, &self.design, self.lsh);
            s.frozen.pop();
        }
        self.remove_old_segments(log_number);
        Ok(())
    }

    fn remove_old_segments(&self, log_number: u64) {
        if let Ok(rd) = std::fs::read_dir(&self.dir) {
            for e in rd.flatten() {
                if let Some(id) = parse_id(&e.file_name().to_string_lossy(), ".wal") {
                    if id < log_number {
                        let _ = std::fs::remove_file(e.path());
                    }
                }
            }
        }
    }

    fn compact(&self, v: &Arc<Version>, plan: &Plan) -> Result<()> {
        let target = match plan {
            Plan::MergeRuns { target, .. } => *target,
            Plan::MergeFile { level, .. } => level + 1,
            Plan::Nothing => return Ok(()),
        };
        // the files this compaction replaces: their filters make room for the output's
        let mut inputs: HashSet<u64> = HashSet::new();
        match plan {
            Plan::MergeRuns {
                level,
                runs,
                target,
                into,
                ..
            } => {
                for (lvl, ids) in [
                    (*level, runs.clone()),
                    (*target, into.iter().copied().collect()),
                ] {
                    if let Some(l) = v.levels.get(lvl - 1) {
                        for r in l.runs.iter().filter(|r| ids.contains(&r.id)) {
                            inputs.extend(r.files.iter().map(|f| f.id));
                        }
                    }
                }
            }
            Plan::MergeFile {
                file, overlapping, ..
            } => {
                inputs.insert(*file);
                inputs.extend(overlapping.iter().copied());
            }
            Plan::Nothing => {}
        }
        let input_entries: u64 = v
            .files()
            .filter(|(_, f)| inputs.contains(&f.id))
            .map(|(_, f)| f.meta.entries)
            .sum();
        let out = Output {
            dir: &self.dir,
            next_id: &self.next_id,
            writer: self.writer_options(v, target, 0, 0, Some((&inputs, input_entries))),
            file_bytes: self.file_bytes(),
            stats: &self.stats,
            level: target,
            threads: self.compaction_threads(),
        };
        let outcome = compaction::execute(plan, v, &out)?;
        self.stats
            .bytes_compacted_read
            .fetch_add(outcome.bytes_read, Ordering::Relaxed);
        self.stats
            .bytes_compacted_written
            .fetch_add(outcome.bytes_written, Ordering::Relaxed);
        let _install = self.install.lock();
        // flushes may have added runs to level 1 meanwhile: graft them onto the outcome
        let current = self.state.read().version.clone();
        let mut nv = outcome.version;
        if let (Some(cur1), true) = (current.levels.first(), !Arc::ptr_eq(&current, v)) {
            let known: HashSet<u64> = v
                .levels
                .first()
                .map(|l| l.runs.iter().map(|r| r.id).collect())
                .unwrap_or_default();
            let fresh: Vec<Arc<Run>> = cur1
                .runs
                .iter()
                .filter(|r| !known.contains(&r.id))
                .cloned()
                .collect();
            if !fresh.is_empty() {
                if nv.levels.is_empty() {
                    nv.levels.push(Default::default());
                }
                for (i, r) in fresh.into_iter().enumerate() {
                    nv.levels[0].runs.insert(i, r);
                }
            }
        }
        self.set_residency(&nv)?;
        let log_number = {
            let s = self.state.read();
            s.frozen
                .last()
                .map(|f| f.first_wal)
                .unwrap_or(s.mem_first_wal)
        };
        self.write_manifest(&nv, log_number)?;
        self.state.write().install(nv, &self.design, self.lsh);
        let live: HashSet<u64> = self
            .state
            .read()
            .version
            .files()
            .map(|(_, f)| f.id)
            .collect();
        for f in outcome.obsolete {
            if !live.contains(&f.id) {
                let _ = std::fs::remove_file(f.path());
            }
        }
        Ok(())
    }

    fn stats(&self) -> Stats {
        let (version, buffer_bytes) = {
            let s = self.state.read();
            (
                s.version.clone(),
                s.mem.bytes() + s.frozen.iter().map(|f| f.buffer.bytes()).sum::<usize>(),
            )
        };
        let residency = self.residency(&version);
        let counters = self.stats.snapshot(version.levels.len());
        let levels: Vec<LevelStats> = version
            .levels
            .iter()
            .enumerate()
            .map(|(i, l)| LevelStats {
                level: i + 1,
                runs: l.runs.len(),
                files: l.runs.iter().map(|r| r.files.len()).sum(),
                bytes: l.bytes(),
                entries: l.entries(),
                hot: i < residency.hot_levels,
                resident_runs: residency.resident_runs.get(i).copied().unwrap_or(0),
                io: counters.get(i).copied().unwrap_or_default(),
            })
            .collect();
        let (mut fences, mut filters) = (0usize, 0usize);
        for (_, f) in version.files() {
            let (a, b) = f.memory_bytes();
            fences += a;
            filters += b;
        }
        let flushed = self.stats.bytes_flushed.load(Ordering::Relaxed);
        let compacted = self.stats.bytes_compacted_written.load(Ordering::Relaxed);
        let user = self.user_bytes.load(Ordering::Relaxed);
        let total = version.bytes();
        let deepest = version
            .levels
            .iter()
            .rev()
            .find(|l| !l.runs.is_empty())
            .map_or(0, |l| l.bytes());
        Stats {
            levels,
            bytes_flushed: flushed,
            bytes_compacted_read: self.stats.bytes_compacted_read.load(Ordering::Relaxed),
            bytes_compacted_written: compacted,
            subcompactions: self.stats.subcompactions.load(Ordering::Relaxed),
            user_bytes_written: user,
            write_amplification: if user == 0 {
                0.0
            } else {
                (flushed + compacted) as f64 / user as f64
            },
            space_amplification: if deepest == 0 {
                0.0
            } else {
                total as f64 / deepest as f64
            },
            disk_bytes: total,
            memory: MemoryStats {
                buffer_bytes,
                filter_bytes: filters,
                fence_bytes: fences,
                buffer_budget_bytes: self.design.buffer_bytes,
                filter_budget_bytes: self.design.filter_bytes,
                fence_budget_bytes: self.design.fence_bytes,
                budget_bytes: self.design.memory_bytes(),
            },
            adapted_from: self.adapted_from.clone(),
        }
    }
}

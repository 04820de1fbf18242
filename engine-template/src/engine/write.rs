//! The write path: size checks, per-key stripes, the log append, group commit and fsync, the buffer insert,
//! and freezing a full buffer.

use super::*;

/// A write's mark on its stripes' pending counts, from its log append to the end of its buffer insert (or its
/// failure); removed when dropped, also if the write panics.
pub(super) struct PendingOn<'a> {
    counts: &'a [AtomicUsize],
    stripes: &'a [usize],
}

impl<'a> PendingOn<'a> {
    pub(super) fn mark(counts: &'a [AtomicUsize], stripes: &'a [usize]) -> Self {
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
pub(super) struct Logged {
    /// Log position to be durable before the batch is acknowledged.
    pub(super) lsn: u64,
    /// Sequence number of the batch's first entry.
    first: u64,
    /// The buffer the batch belongs to (the active one when it was logged).
    pub(super) mem: Arc<Buffer>,
    _inserting: Inserting,
}

/// A writer between its log append and the end of its buffer inserts: counted on the buffer's writer count
/// while alive (also if the insert panics), so the buffer's flush waits for it.
pub(super) struct Inserting(Arc<AtomicUsize>);

impl Inserting {
    pub(super) fn start(writers: Arc<AtomicUsize>) -> Self {
        writers.fetch_add(1, Ordering::SeqCst);
        Inserting(writers)
    }
}

impl Drop for Inserting {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::SeqCst);
    }
}

pub(super) fn check_sizes(key: &[u8], value: Option<&[u8]>) -> Result<()> {
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
    pub(super) fn stripe_index(&self, key: &[u8]) -> usize {
        (cosine_fence_pointers::stable_hash(key) % KEY_STRIPES as u64) as usize
    }

    pub(super) fn check_poisoned(&self) -> Result<()> {
        if self.shutdown.load(Ordering::SeqCst) {
            return Err(Error::Closed);
        }
        match &*self.poisoned.lock() {
            Some(m) => Err(Error::Poisoned(m.clone())),
            None => Ok(()),
        }
    }

    pub(super) fn poison(&self, e: &Error) {
        let mut p = self.poisoned.lock();
        if p.is_none() {
            *p = Some(e.to_string());
        }
        self.done_cv.notify_all();
    }

    pub(super) fn signal(&self) {
        *self.work.lock() = true;
        self.work_cv.notify_all();
    }

    /// Whether writers must wait: the active buffer full (until it is frozen, which waits for the frozen
    /// one's flush: M_B is spent), or level 1 lagging its design. Writes go on into the active buffer during
    /// a flush.
    pub(super) fn stalled(&self, s: &State) -> bool {
        // a full active buffer takes nothing more until it is frozen (its writer freezes it at once when no
        // frozen buffer is left, else after that one's flush)
        (s.mem.is_full() && !s.mem.is_empty()) || s.backlog
    }

    /// The sorted, distinct stripes of a batch's keys.
    pub(super) fn stripes_of(&self, batch: &[(&[u8], Option<&[u8]>)]) -> Vec<usize> {
        let mut stripes: Vec<usize> = batch.iter().map(|(k, _)| self.stripe_index(k)).collect();
        stripes.sort_unstable();
        stripes.dedup();
        stripes
    }

    /// A write: log the batch under its keys' stripe locks, wait for the sync mode's durability without
    /// them (concurrent writers share one fsync), then insert it into the buffer, where readers see it.
    pub(super) fn write(&self, batch: &[(&[u8], Option<&[u8]>)]) -> Result<()> {
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
    pub(super) fn throttle(&self) -> Result<()> {
        if self.stalled(&self.state.read()) {
            self.signal();
            self.wait_for(|s| !self.stalled(s))?;
        }
        Ok(())
    }

    /// Locks stripe `i` once no write logged under it is still on its way into the buffer (read-modify-write
    /// must read the newest logged value). Writes log under the stripe lock, so none can start meanwhile.
    pub(super) fn lock_settled(&self, i: usize) -> parking_lot::MutexGuard<'_, ()> {
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
    pub(super) fn log(&self, batch: &[(&[u8], Option<&[u8]>)]) -> Result<Logged> {
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
        // a sync mark where an fsync reached further than the last one said (recovery's proof that damage
        // before it is durable damage), then one record for the whole batch: a crash leaves all of it or none
        w.wal.mark(self.synced_lsn.load(Ordering::SeqCst), &mut rec);
        wal::encode_batch(first, batch, &mut rec);
        let appended = w.wal.append(&rec);
        // the scratch keeps a small record's room across writes, not a large batch's (up to 4 GiB, outside
        // the design's memory)
        if rec.capacity() > SCRATCH_KEPT_BYTES {
            rec = Vec::new();
        }
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
    pub(super) fn insert(&self, batch: &[(&[u8], Option<&[u8]>)], logged: &Logged) {
        // while the batch goes into the buffer no lookup may cache a value of its keys (it may have read an
        // older one from the runs), and no cached value of them may answer once any of it is visible
        if let Some(c) = &self.cache {
            for (key, _) in batch {
                c.begin_write(key);
            }
        }
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
        if let Some(c) = &self.cache {
            for (key, _) in batch {
                c.end_write(key);
            }
        }
    }

    /// Freezes `mem` if it is full and still the active buffer.
    /// Freezes `mem` once it is full and still the active buffer, after waiting for the frozen one's flush
    /// if there is one (the two share M_B).
    pub(super) fn freeze_if_full(&self, mem: &Arc<Buffer>) -> Result<()> {
        if mem.is_full() {
            self.freeze_when_room(mem)?;
        }
        Ok(())
    }

    /// Waits until fewer than `MAX_FROZEN` buffers are frozen, then freezes `mem` if it is still the active
    /// buffer and holds anything.
    pub(super) fn freeze_when_room(&self, mem: &Arc<Buffer>) -> Result<()> {
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
    pub(super) fn durable(&self, lsn: u64) -> Result<()> {
        if self.opts.sync == SyncMode::Batch && lsn > 0 {
            self.sync_to(lsn)?;
        }
        Ok(())
    }

    /// Group commit: one fsync covers every record appended before it started. Once an fsync has failed
    /// the engine is poisoned and no later write is acknowledged.
    pub(super) fn sync_to(&self, lsn: u64) -> Result<()> {
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
    pub(super) fn fsync_log(
        &self,
        file: &dyn crate::storage::WriteFile,
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
    pub(super) fn sync_current(&self, w: &Writer) -> Result<()> {
        let (file, path) = w.wal.sync_handle();
        self.fsync_log(&*file, &path, w.wal.lsn, w.wal.lsn)
    }

    /// Freezes the buffer: the log rotates to a new segment (the old one fsynced), the buffer joins the
    /// frozen list, and the background thread is woken to flush it.
    /// A failure poisons the engine: the log could not be made durable or rotated.
    pub(super) fn freeze(&self, w: &mut Writer) -> Result<()> {
        // a poisoned log is never rotated: a failed append may have left part of a record at the end of this
        // segment, which is a torn tail only while the segment is the last one
        self.check_poisoned()?;
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
        let old = std::mem::replace(&mut s.mem, new_buffer(&self.design, &self.parts));
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
        // the frozen buffer takes its bytes from the read-only region's share of M_B
        if self.parts.read_only_region {
            s.fit_read_only(&self.design);
        }
        drop(s);
        self.signal();
        // writers waiting for the full buffer to be frozen
        let _g = self.work.lock();
        self.done_cv.notify_all();
        Ok(())
    }

    pub(super) fn wait_for(&self, ready: impl Fn(&State) -> bool) -> Result<()> {
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
}

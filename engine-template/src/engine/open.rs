//! Opening an engine: the directory, its lock, the manifest, recovery of the log into the write buffer, and
//! the background threads.

use super::*;

impl Engine {
    /// Opens with explicit options. A directory created with another design is adapted: existing files keep
    /// their layout and are reshaped by later compactions under the new design ([`Stats::adapted_from`]).
    pub fn open_with(dir: impl AsRef<Path>, design: &Design, opts: Options) -> Result<Engine> {
        design.validate()?;
        let dir = dir.as_ref().to_path_buf();
        let storage = opts.storage.clone();
        create_dirs(&storage, &dir)?;
        let lock = lock_dir(&storage, &dir)?;
        let stored = manifest::load(&storage, &dir)?;
        // what the manifest says is made durable before files are deleted on its strength: a process killed
        // between a manifest's rename and its directory fsync leaves a manifest visible but not durable. The
        // directory's own entry in its parent likewise (a process killed right after creating it)
        let parent =
            crate::storage::parent_of(&std::path::absolute(&dir).map_err(io(&dir))?).to_path_buf();
        storage.sync_dir(&parent).map_err(io(&parent))?;
        storage.sync_dir(&dir).map_err(io(&dir))?;
        let stats = Arc::new(IoStats::default());
        let parts = opts.parts.unwrap_or(Parts::of(design));
        // ids in use on disk, so that new files never collide with leftovers
        let mut max_id = 0u64;
        let mut wal_ids = Vec::new();
        let mut run_ids = Vec::new();
        for name in storage.list(&dir).map_err(io(&dir))? {
            if let Some(id) = parse_id(&name, ".wal") {
                wal_ids.push(id);
                max_id = max_id.max(id);
            } else if let Some(id) = parse_id(&name, ".run") {
                run_ids.push(id);
                max_id = max_id.max(id);
            }
        }
        wal_ids.sort_unstable();
        // a directory of runs or logged records without a manifest lost it (a new database writes its
        // manifest before it takes a write): opened as new, its runs would be deleted as leftovers, so it is
        // refused with nothing touched
        if stored.is_none() {
            let logs = wal_ids
                .iter()
                .filter(|id| {
                    let p = wal::segment_path(&dir, **id);
                    storage
                        .open_read(&p)
                        .and_then(|f| f.len())
                        .map_or(true, |n| n > 0)
                })
                .count();
            if !run_ids.is_empty() || logs > 0 {
                return Err(Error::MissingManifest {
                    dir: dir.clone(),
                    runs: run_ids.len(),
                    logs,
                });
            }
        }
        let (mut version, last_seq, log_number, next_id, adapted_from) =
            load_version(&storage, &dir, stored.as_ref(), design, max_id)?;
        version.trim();
        // files of a compaction or flush that never reached the manifest
        let live: HashSet<u64> = version.files().map(|(_, f)| f.id).collect();
        for id in run_ids {
            if !live.contains(&id) {
                let _ = storage.remove(&file_path(&dir, id));
            }
        }
        // replay the log. Each live segment holds one buffer's records (the log rotates when a buffer
        // freezes), so each is replayed into a buffer of its own: the older ones frozen for the flusher, the
        // newest active. The write buffers hold no more after a restart than before it (M_B together); a
        // log with more segments than buffers (written under another design) puts its oldest in one.
        let live_wals: Vec<u64> = wal_ids
            .iter()
            .copied()
            .filter(|id| *id >= log_number)
            .collect();
        let (mut replayed, seq) = replay(
            &storage,
            &dir,
            &live_wals,
            last_seq,
            opts.wal_recovery,
            || new_buffer(design, &parts),
        )?;
        // what replay serves must be durable before anyone reads it: records a killed process had written but
        // not yet fsynced are fsynced now
        for id in &live_wals {
            let path = wal::segment_path(&dir, *id);
            opts.storage
                .open_append(&path)
                .and_then(|f| f.sync())
                .map_err(io(&path))?;
        }
        for id in wal_ids.iter().filter(|id| **id < log_number) {
            let _ = storage.remove(&wal::segment_path(&dir, *id));
        }
        let next = AtomicU64::new(next_id);
        // the active buffer keeps its segment: writes go on appending to the last one replayed (its torn tail
        // is gone), so a segment still holds one buffer's records and the next restart rebuilds the same
        // buffers, instead of freezing the active one at every restart
        let wal_id = match live_wals.last() {
            Some(id) => *id,
            None => next.fetch_add(1, Ordering::SeqCst),
        };
        let wal = WalWriter::create(&opts.storage, &dir, wal_id, 0)?;
        let (mem_first_wal, mem) = replayed
            .pop()
            .unwrap_or_else(|| (wal_id, new_buffer(design, &parts)));
        let frozen: Vec<Frozen> = replayed
            .into_iter()
            .rev()
            .map(|(first_wal, buffer)| Frozen {
                buffer,
                writers: Arc::new(AtomicUsize::new(0)),
                first_wal,
            })
            .collect();
        let oldest_wal = frozen.last().map_or(mem_first_wal, |f| f.first_wal);
        let inner = Arc::new(Inner {
            dir: dir.clone(),
            design: design.clone(),
            parts,
            opts,
            state: RwLock::new(State {
                mem,
                mem_writers: Arc::new(AtomicUsize::new(0)),
                mem_first_wal,
                frozen,
                read_only: Vec::new(),
                backlog: level1_backlog(design, &parts, &version),
                version: Arc::new(version),
            }),
            writer: Mutex::new(Writer {
                wal,
                scratch: Vec::new(),
            }),
            synced_lsn: AtomicU64::new(0),
            sync_lock: Mutex::new(()),
            stripes: (0..KEY_STRIPES).map(|_| Mutex::new(())).collect(),
            cache: EntryCache::new(design.cache_bytes),
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
            inner.write_manifest(&v, oldest_wal, last_seq)?;
        }
        let workers = start_workers(&inner, &dir)?;
        let engine = Engine {
            inner,
            workers: Mutex::new(workers),
        };
        // a replayed buffer already full (its log ended just before it froze, or M_B shrank) freezes once the
        // flusher has room, so the buffers stay within M_B
        let mem = engine.inner.state.read().mem.clone();
        if mem.is_full() {
            engine.inner.freeze_when_room(&mem)?;
        }
        Ok(engine)
    }
}

/// Creates `dir` and every missing ancestor, fsyncing each new directory's parent so the new entries survive a
/// crash.
fn create_dirs(storage: &Storage, dir: &Path) -> Result<()> {
    if !storage.is_dir(dir) {
        // the first ancestor that exists: every directory below it is new, and each new entry must
        // survive a crash (a relative one-part path's parent is the working directory, `.`)
        let absolute = std::path::absolute(dir).map_err(io(dir))?;
        let existing = absolute
            .ancestors()
            .find(|a| storage.is_dir(a))
            .map(Path::to_path_buf)
            .unwrap_or_else(|| PathBuf::from("/"));
        storage.create_dir_all(dir).map_err(io(dir))?;
        let mut created: Vec<&Path> = absolute
            .ancestors()
            .take_while(|a| *a != existing.as_path())
            .collect();
        created.reverse();
        // fsync each new directory's parent, from the oldest existing one down
        for d in created {
            let parent = d.parent().unwrap_or(Path::new("/"));
            storage.sync_dir(parent).map_err(io(parent))?;
        }
    }
    Ok(())
}

/// Takes the directory's `LOCK` (flock): one engine per directory.
fn lock_dir(storage: &Storage, dir: &Path) -> Result<Box<dyn std::any::Any + Send + Sync>> {
    let lock_path = dir.join("LOCK");
    match storage.lock(&lock_path) {
        Ok(guard) => Ok(guard),
        Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {
            Err(Error::Locked(dir.to_path_buf()))
        }
        Err(e) => Err(Error::Io {
            path: lock_path,
            source: e,
        }),
    }
}

/// The tree the manifest records (every run file opened and verified), its last flushed sequence number, its
/// first live log segment, the next file id and the design it was written with when that is not `design`.
fn load_version(
    storage: &Storage,
    dir: &Path,
    stored: Option<&Manifest>,
    design: &Design,
    max_id: u64,
) -> Result<(Version, u64, u64, u64, Option<Design>)> {
    Ok(match stored {
        Some(m) => {
            let mut levels = Vec::new();
            for runs in &m.levels {
                let mut level = cosine_levels::Level::default();
                for r in runs {
                    let mut files = Vec::new();
                    for id in &r.files {
                        files.push(Arc::new(RunFile::open(storage, &file_path(dir, *id), *id)?));
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
    })
}

/// Buffers rebuilt from the log: (the first segment of each, the buffer), oldest first.
type Replayed = Vec<(u64, Arc<Buffer>)>;

/// Replays the live log segments (oldest first) into buffers made by `new_buffer`: each segment holds one
/// buffer's records (the log rotates when a buffer freezes), so each is replayed into a buffer of its own, the
/// older ones to be frozen for the flusher and the newest active. The write buffers hold no more after a
/// restart than before it (M_B together); a log with more segments than buffers (written under another
/// design) puts its oldest in one. Returns (first segment, buffer) oldest first, and the highest sequence
/// number seen.
fn replay(
    storage: &Storage,
    dir: &Path,
    live_wals: &[u64],
    last_seq: u64,
    mode: WalRecovery,
    new_buffer: impl Fn() -> Arc<Buffer>,
) -> Result<(Replayed, u64)> {
    let mut seq = last_seq;
    let shared = live_wals.len().saturating_sub(MAX_FROZEN + 1);
    let mut replayed: Replayed = Vec::new();
    for (i, id) in live_wals.iter().enumerate() {
        if i == 0 || i > shared {
            replayed.push((*id, new_buffer()));
        }
        let Some((_, buffer)) = replayed.last() else {
            continue;
        };
        for rec in wal::replay(storage, dir, *id, i + 1 == live_wals.len(), mode)? {
            if rec.seq > last_seq {
                buffer.insert(rec.key, rec.seq, rec.value);
            }
            seq = seq.max(rec.seq);
        }
    }
    Ok((replayed, seq))
}

/// Starts the flush and the compaction thread.
fn start_workers(inner: &Arc<Inner>, dir: &Path) -> Result<Vec<JoinHandle<()>>> {
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
                .map_err(io(dir))?,
        );
    }
    Ok(workers)
}

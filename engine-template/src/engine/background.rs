//! Background work: the flush and compaction threads, flushing a frozen buffer, compactions, installing
//! versions and writing the manifest.

use super::*;

impl Inner {
    /// Writes the manifest of `v` with the records up to `last_seq` in runs and the log from `log_number` on
    /// still needed. Callers hold `install`, so manifests are written one at a time.
    pub(super) fn write_manifest(&self, v: &Version, log_number: u64, last_seq: u64) -> Result<()> {
        let m = Manifest {
            format: manifest::MANIFEST_FORMAT,
            design: self.design.clone(),
            next_id: self.next_id.load(Ordering::SeqCst),
            last_seq,
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
        manifest::store(&self.opts.storage, &self.dir, &m)
    }

    /// Whether a background role has something to do.
    pub(super) fn has_work(&self, role: Role) -> bool {
        let s = self.state.read();
        match role {
            Role::Flush => !s.frozen.is_empty(),
            Role::Compact => {
                planner::plan(
                    &s.version.levels,
                    &Policy::of(&self.design, self.hot_levels(&s.version)),
                ) != Plan::Nothing
            }
        }
    }

    /// A background thread: the flusher writes frozen buffers to level 1; the compactor reshapes the tree.
    /// They run side by side, so a long merge never holds up a flush (and so the writers).
    pub(super) fn background(self: Arc<Self>, role: Role) {
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
            // a panic in a flush or a merge (a bug, or a part that panics) poisons the engine as an error
            // does: the thread stays up, writers get the error instead of waiting for a flush that never
            // comes, and close returns it
            let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| match role {
                Role::Flush => self.flush_all(),
                Role::Compact => self.compact_all(),
            }))
            .unwrap_or_else(|panic| {
                Err(Error::BackgroundPanic(
                    role.name(),
                    super::panic_message(panic.as_ref()),
                ))
            });
            if let Err(e) = result {
                self.poison(&e);
            }
            let _g = self.work.lock();
            self.done_cv.notify_all();
        }
    }

    pub(super) fn flush_all(&self) -> Result<()> {
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

    pub(super) fn compact_all(&self) -> Result<()> {
        // compact until the tree matches its design
        while !self.shutdown.load(Ordering::SeqCst) {
            let v = self.state.read().version.clone();
            let plan = planner::plan(&v.levels, &Policy::of(&self.design, self.hot_levels(&v)));
            if plan == Plan::Nothing {
                break;
            }
            self.compact(&v, &plan)?;
            let _g = self.work.lock();
            self.done_cv.notify_all();
        }
        Ok(())
    }

    pub(super) fn flush_buffer(&self, buffer: &Arc<Buffer>) -> Result<()> {
        let v = self.state.read().version.clone();
        let opts = self.writer_options(&v, 1, buffer.len() as u64, buffer.bytes() as u64, None);
        let out = Output {
            dir: &self.dir,
            storage: &self.opts.storage,
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
        // the flushed records count as in runs only once a manifest says so: were `flushed_seq` raised
        // before, a compaction's manifest written after this one failed would record it while the run is
        // in no manifest, and a restart would skip the records' log replay and lose them
        let last_seq = self.flushed_seq.load(Ordering::SeqCst).max(max_seq);
        self.write_manifest(&nv, log_number, last_seq)?;
        self.flushed_seq.store(last_seq, Ordering::SeqCst);
        {
            let mut s = self.state.write();
            s.install(nv, &self.design, &self.parts);
            let flushed = s.frozen.pop();
            // the hybrid log keeps the flushed buffer as the newest of its read-only region
            if let (Some(f), true) = (flushed, self.parts.read_only_region) {
                s.read_only.insert(0, f.buffer);
                s.fit_read_only(&self.design);
            }
        }
        self.remove_old_segments(log_number);
        Ok(())
    }

    pub(super) fn remove_old_segments(&self, log_number: u64) {
        if let Ok(names) = self.opts.storage.list(&self.dir) {
            for name in names {
                if parse_id(&name, ".wal").is_some_and(|id| id < log_number) {
                    let _ = self.opts.storage.remove(&self.dir.join(name));
                }
            }
        }
    }

    pub(super) fn compact(&self, v: &Arc<Version>, plan: &Plan) -> Result<()> {
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
            storage: &self.opts.storage,
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
        // the replaced files give back their fences, filters and hash indexes before the output's are
        // loaded, so a compaction never holds both within M_FP and M_BF (a reader of the old version still
        // finds their blocks through the top index)
        let kept: HashSet<u64> = nv.files().map(|(_, f)| f.id).collect();
        for f in outcome.obsolete.iter().filter(|f| !kept.contains(&f.id)) {
            f.set_residency(false, false)?;
        }
        self.set_residency(&nv)?;
        let log_number = {
            let s = self.state.read();
            s.frozen
                .last()
                .map(|f| f.first_wal)
                .unwrap_or(s.mem_first_wal)
        };
        self.write_manifest(&nv, log_number, self.flushed_seq.load(Ordering::SeqCst))?;
        self.state.write().install(nv, &self.design, &self.parts);
        let live: HashSet<u64> = self
            .state
            .read()
            .version
            .files()
            .map(|(_, f)| f.id)
            .collect();
        for f in outcome.obsolete {
            if !live.contains(&f.id) {
                let _ = self.opts.storage.remove(f.path());
            }
        }
        Ok(())
    }
}

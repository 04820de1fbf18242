//! Compaction's output writer: where output files go ([`Output`], [`file_path`]) and the one loop that writes a
//! sorted stream of entries as a run's files ([`write_entries`]), shared by flushes, merges and subcompactions.

use crate::error::Result;
use crate::runfile::{Entry, FileMeta, RunFile, RunFileWriter, WriterOptions};
use crate::stats::IoStats;
use cosine_storage::Storage;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

/// Where and how to write output files.
pub struct Output<'a> {
    /// Directory of the database.
    pub dir: &'a Path,
    /// The storage files are written through.
    pub storage: &'a Storage,
    /// File-id allocator (shared with the engine).
    pub next_id: &'a AtomicU64,
    /// Writer options for the target level (bits per key from Monkey for that level).
    pub writer: WriterOptions,
    /// Split the output into files of about this many bytes (u64::MAX: one file per run).
    pub file_bytes: u64,
    /// Counters.
    pub stats: &'a Arc<IoStats>,
    /// Target level (1-based), for counting block writes.
    pub level: usize,
    /// Threads one merge may use (subcompactions by key range, `Design.threads`); 1 merges on the calling
    /// thread alone.
    pub threads: usize,
}

/// The path of run file `id` in `dir`.
pub fn file_path(dir: &Path, id: u64) -> PathBuf {
    dir.join(format!("{id:010}.run"))
}

/// Writes a sorted stream of entries as one run's files. Returns the opened files and the bytes written.
pub fn write_entries(
    mut next: impl FnMut() -> Result<Option<Entry>>,
    drop_tombstones: bool,
    out: &Output<'_>,
) -> Result<(Vec<Arc<RunFile>>, u64)> {
    let mut files = Vec::new();
    let mut bytes = 0;
    let mut writer: Option<(u64, RunFileWriter)> = None;
    let finish = |(id, w): (u64, RunFileWriter),
                  files: &mut Vec<Arc<RunFile>>,
                  bytes: &mut u64|
     -> Result<()> {
        let meta: FileMeta = w.finish()?;
        *bytes += meta.size;
        out.stats
            .level(out.level)
            .block_writes
            .fetch_add(meta.blocks_written, Ordering::Relaxed);
        if meta.entries == 0 {
            let _ = out.storage.remove(&file_path(out.dir, id));
            return Ok(());
        }
        let f = RunFile::open(out.storage, &file_path(out.dir, id), id)?;
        files.push(Arc::new(f));
        Ok(())
    };
    while let Some((k, seq, v)) = next()? {
        if v.is_none() && drop_tombstones {
            continue;
        }
        if writer
            .as_ref()
            .is_some_and(|(_, w)| w.bytes() >= out.file_bytes)
        {
            if let Some(w) = writer.take() {
                finish(w, &mut files, &mut bytes)?;
            }
        }
        if writer.is_none() {
            let id = out.next_id.fetch_add(1, Ordering::SeqCst);
            writer = Some((
                id,
                RunFileWriter::create(out.storage, &file_path(out.dir, id), out.writer)?,
            ));
        }
        if let Some((_, w)) = writer.as_mut() {
            w.add(&k, seq, v.as_deref())?;
        }
    }
    if let Some(w) = writer.take() {
        finish(w, &mut files, &mut bytes)?;
    }
    Ok((files, bytes))
}

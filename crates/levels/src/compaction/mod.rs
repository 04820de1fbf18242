//! The compaction mechanism: writes runs (from a buffer or by merging) and applies a plan to a version.

use crate::error::Result;
use crate::planner::{FileView, LevelView, Plan, RunView};
use crate::runfile::{Entry, FileMeta, RunFile, RunFileWriter, WriterOptions};
use crate::stats::IoStats;
use crate::subcompaction::{merge_inputs, Inputs};
use crate::version::{Level, Run, Version};
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

/// A copy of a version's shape as views, to carry a real tree into the simulator ([`crate::simulate`]); the
/// planner itself reads a [`Version`] in place ([`crate::planner::LevelShape`]).
pub fn view(version: &Version) -> Vec<LevelView> {
    version
        .levels
        .iter()
        .map(|l| {
            l.runs
                .iter()
                .map(|r| RunView {
                    id: r.id,
                    files: r
                        .files
                        .iter()
                        .map(|f| FileView {
                            id: f.id,
                            bytes: f.meta.size,
                            min_key: f.meta.min_key.clone(),
                            max_key: f.meta.max_key.clone(),
                        })
                        .collect(),
                })
                .collect()
        })
        .collect()
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

/// What a compaction did.
pub struct Outcome {
    /// The version after the compaction.
    pub version: Version,
    /// Files no longer referenced (delete once the new version is durable).
    pub obsolete: Vec<Arc<RunFile>>,
    /// Bytes read and written.
    pub bytes_read: u64,
    /// Bytes written.
    pub bytes_written: u64,
}

fn find_run(version: &Version, level: usize, id: u64) -> Option<Arc<Run>> {
    version
        .levels
        .get(level - 1)?
        .runs
        .iter()
        .find(|r| r.id == id)
        .cloned()
}

/// Carries out a plan on `version`, writing new files through `out` (whose level must be the plan's target).
pub fn execute(plan: &Plan, version: &Version, out: &Output<'_>) -> Result<Outcome> {
    let mut v = version.clone();
    match plan {
        Plan::Nothing => Ok(Outcome {
            version: v,
            obsolete: Vec::new(),
            bytes_read: 0,
            bytes_written: 0,
        }),
        Plan::MergeRuns {
            level,
            runs,
            target,
            into,
            drop_tombstones,
        } => {
            let mut inputs: Vec<Arc<Run>> = runs
                .iter()
                .filter_map(|id| find_run(version, *level, *id))
                .collect();
            if let Some(id) = into {
                inputs.extend(find_run(version, *target, *id));
            }
            let bytes_read: u64 = inputs.iter().map(|r| r.bytes()).sum();
            let sources: Inputs = inputs
                .iter()
                .map(|r| {
                    let lvl = if runs.contains(&r.id) {
                        *level
                    } else {
                        *target
                    };
                    (r.files.clone(), lvl)
                })
                .collect();
            let (files, written) = merge_inputs(&sources, *drop_tombstones, out)?;
            let obsolete: Vec<Arc<RunFile>> = inputs.iter().flat_map(|r| r.files.clone()).collect();
            while v.levels.len() < *target {
                v.levels.push(Level::default());
            }
            // position of the newest merged run in the source level
            let src = &mut v.levels[*level - 1];
            let pos = src
                .runs
                .iter()
                .position(|r| runs.contains(&r.id))
                .unwrap_or(0);
            src.runs.retain(|r| !runs.contains(&r.id));
            let new_run = Arc::new(Run {
                id: out.next_id.fetch_add(1, Ordering::SeqCst),
                files,
            });
            let dst = &mut v.levels[*target - 1];
            if *target == *level {
                if !new_run.files.is_empty() {
                    dst.runs.insert(pos.min(dst.runs.len()), new_run);
                }
            } else if let Some(id) = into {
                let at = dst.runs.iter().position(|r| r.id == *id).unwrap_or(0);
                dst.runs.retain(|r| r.id != *id);
                if !new_run.files.is_empty() {
                    dst.runs.insert(at.min(dst.runs.len()), new_run);
                }
            } else if !new_run.files.is_empty() {
                dst.runs.insert(0, new_run);
            }
            v.trim();
            Ok(Outcome {
                version: v,
                obsolete,
                bytes_read,
                bytes_written: written,
            })
        }
        Plan::MergeFile {
            level,
            run,
            file,
            into,
            overlapping,
            drop_tombstones,
        } => {
            let src_run = find_run(version, *level, *run);
            let Some(src_run) = src_run else {
                return Ok(Outcome {
                    version: v,
                    obsolete: Vec::new(),
                    bytes_read: 0,
                    bytes_written: 0,
                });
            };
            let Some(moved) = src_run.files.iter().find(|f| f.id == *file).cloned() else {
                return Ok(Outcome {
                    version: v,
                    obsolete: Vec::new(),
                    bytes_read: 0,
                    bytes_written: 0,
                });
            };
            let target_run = into.and_then(|id| find_run(version, level + 1, id));
            let olds: Vec<Arc<RunFile>> = target_run
                .as_ref()
                .map(|r| {
                    r.files
                        .iter()
                        .filter(|f| overlapping.contains(&f.id))
                        .cloned()
                        .collect()
                })
                .unwrap_or_default();
            let (new_files, bytes_read, written, obsolete) = if olds.is_empty()
                && target_run.is_none()
            {
                // nothing below: the file moves down as it is (metadata only)
                (vec![moved.clone()], 0, 0, Vec::new())
            } else if olds.is_empty() {
                (vec![moved.clone()], 0, 0, Vec::new())
            } else {
                let bytes_read = moved.meta.size + olds.iter().map(|f| f.meta.size).sum::<u64>();
                let sources: Inputs =
                    vec![(vec![moved.clone()], *level), (olds.clone(), level + 1)];
                let (files, written) = merge_inputs(&sources, *drop_tombstones, out)?;
                let mut obsolete = olds.clone();
                obsolete.push(moved.clone());
                (files, bytes_read, written, obsolete)
            };
            while v.levels.len() < level + 1 {
                v.levels.push(Level::default());
            }
            // source: drop the file (and the run if it empties)
            let src = &mut v.levels[*level - 1];
            if let Some(i) = src.runs.iter().position(|r| r.id == *run) {
                let mut files: Vec<Arc<RunFile>> = src.runs[i]
                    .files
                    .iter()
                    .filter(|f| f.id != *file)
                    .cloned()
                    .collect();
                if files.is_empty() {
                    src.runs.remove(i);
                } else {
                    files.sort_by(|a, b| a.meta.min_key.cmp(&b.meta.min_key));
                    src.runs[i] = Arc::new(Run { id: *run, files });
                }
            }
            let dst = &mut v.levels[*level];
            match target_run {
                Some(t) => {
                    let mut files: Vec<Arc<RunFile>> = t
                        .files
                        .iter()
                        .filter(|f| !overlapping.contains(&f.id))
                        .cloned()
                        .collect();
                    files.extend(new_files);
                    files.sort_by(|a, b| a.meta.min_key.cmp(&b.meta.min_key));
                    if let Some(i) = dst.runs.iter().position(|r| r.id == t.id) {
                        dst.runs[i] = Arc::new(Run { id: t.id, files });
                    }
                }
                None => {
                    if !new_files.is_empty() {
                        dst.runs.insert(
                            0,
                            Arc::new(Run {
                                id: out.next_id.fetch_add(1, Ordering::SeqCst),
                                files: new_files,
                            }),
                        );
                    }
                }
            }
            v.trim();
            Ok(Outcome {
                version: v,
                obsolete,
                bytes_read,
                bytes_written: written,
            })
        }
    }
}

#[cfg(test)]
mod tests;

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

/// The shape of a version as the planner sees it.
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
mod tests {
    use super::*;
    use crate::merge::{EntryIter, RunIter};
    use crate::subcompaction::split_ranges;
    use cosine_design::FilterGranularity;

    static STORAGE: std::sync::LazyLock<Storage> = std::sync::LazyLock::new(Storage::default);

    fn output<'a>(
        dir: &'a Path,
        next_id: &'a AtomicU64,
        stats: &'a Arc<IoStats>,
        threads: usize,
    ) -> Output<'a> {
        Output {
            dir,
            storage: &STORAGE,
            next_id,
            writer: WriterOptions {
                block_bytes: 512,
                bits_per_key: 8.0,
                granularity: FilterGranularity::File,
                hash_index: false,
            },
            file_bytes: 16 << 10,
            stats,
            level: 2,
            threads,
        }
    }

    /// One run (several files) holding keys `step·i` for i < n, with values tagged `tag`, every 5th a
    /// tombstone.
    fn run(out: &Output<'_>, n: u64, step: u64, seq0: u64, tag: &str) -> Vec<Arc<RunFile>> {
        let mut i = 0;
        write_entries(
            || {
                if i == n {
                    return Ok(None);
                }
                let k = format!("key{:08}", i * step).into_bytes();
                let v = (i % 5 != 0).then(|| format!("{tag}-{i}").into_bytes());
                i += 1;
                Ok(Some((k, seq0 + i, v)))
            },
            false,
            out,
        )
        .unwrap()
        .0
    }

    fn entries(files: &[Arc<RunFile>]) -> Vec<Entry> {
        let mut it = RunIter::new(files.to_vec(), None, None);
        let mut all = Vec::new();
        while let Some(e) = it.next_entry().unwrap() {
            all.push(e);
        }
        all
    }

    #[test]
    fn subcompactions_write_what_one_merge_writes() {
        let dir = tempfile::tempdir().unwrap();
        let next_id = AtomicU64::new(1);
        let stats = Arc::new(IoStats::default());
        let one = output(dir.path(), &next_id, &stats, 1);
        // newest first: overlapping keys, different densities, so the cuts fall unevenly
        let inputs: Inputs = vec![
            (run(&one, 3_000, 3, 100_000, "new"), 1),
            (run(&one, 4_000, 2, 50_000, "mid"), 1),
            (run(&one, 9_000, 1, 0, "old"), 2),
        ];
        assert!(inputs.iter().all(|(f, _)| f.len() > 3));
        for drop_tombstones in [false, true] {
            let (serial, _) = merge_inputs(&inputs, drop_tombstones, &one).unwrap();
            for threads in [2, 3, 8] {
                let out = output(dir.path(), &next_id, &stats, threads);
                assert!(split_ranges(&inputs, threads, out.file_bytes).len() > 1);
                let (parallel, bytes) = merge_inputs(&inputs, drop_tombstones, &out).unwrap();
                assert_eq!(bytes, parallel.iter().map(|f| f.meta.size).sum::<u64>());
                // files concatenate in key order
                for w in parallel.windows(2) {
                    assert!(w[0].meta.max_key < w[1].meta.min_key);
                }
                assert_eq!(entries(&parallel), entries(&serial), "threads {threads}");
            }
            // the serial merge against a model: each key's newest version
            let mut model = std::collections::BTreeMap::new();
            for (n, step, tag) in [
                (9_000u64, 1u64, "old"),
                (4_000, 2, "mid"),
                (3_000, 3, "new"),
            ] {
                for i in 0..n {
                    let v = (i % 5 != 0).then(|| format!("{tag}-{i}").into_bytes());
                    model.insert(format!("key{:08}", i * step).into_bytes(), v);
                }
            }
            let want: Vec<(Vec<u8>, Option<Vec<u8>>)> = model
                .into_iter()
                .filter(|(_, v)| !drop_tombstones || v.is_some())
                .collect();
            let got: Vec<(Vec<u8>, Option<Vec<u8>>)> = entries(&serial)
                .into_iter()
                .map(|(k, _, v)| (k, v))
                .collect();
            assert_eq!(got, want);
        }
    }

    #[test]
    fn runs_of_one_file_each_split_evenly() {
        // tiered runs smaller than a file: each input is one file spanning the whole key space
        let dir = tempfile::tempdir().unwrap();
        let next_id = AtomicU64::new(1);
        let stats = Arc::new(IoStats::default());
        let mut one = output(dir.path(), &next_id, &stats, 1);
        one.file_bytes = u64::MAX;
        let inputs: Inputs = (0..4)
            .map(|r| (run(&one, 2_000, 4, r * 10_000, &format!("r{r}")), 1))
            .collect();
        assert!(inputs.iter().all(|(f, _)| f.len() == 1));
        for parts in [2, 4] {
            let ranges = split_ranges(&inputs, parts, 16 << 10);
            assert_eq!(ranges.len(), parts);
            // every range holds about 1/parts of the keys
            let all = entries(&inputs[0].0);
            for (lo, hi) in &ranges {
                let n = all
                    .iter()
                    .filter(|(k, _, _)| {
                        lo.as_ref().is_none_or(|l| k >= l) && hi.as_ref().is_none_or(|h| k < h)
                    })
                    .count();
                let even = all.len() / parts;
                assert!(
                    n > even / 2 && n < even * 3 / 2,
                    "{parts} parts: {n} of {}",
                    all.len()
                );
            }
        }
    }

    #[test]
    fn small_merges_stay_on_one_thread() {
        let dir = tempfile::tempdir().unwrap();
        let next_id = AtomicU64::new(1);
        let stats = Arc::new(IoStats::default());
        let out = output(dir.path(), &next_id, &stats, 1);
        let inputs: Inputs = vec![
            (run(&out, 50, 1, 0, "a"), 1),
            (run(&out, 50, 2, 100, "b"), 2),
        ];
        assert_eq!(split_ranges(&inputs, 8, out.file_bytes), vec![(None, None)]);
    }
}

//! The compaction mechanism: writes runs (from a buffer or by merging) and applies a plan to a version.
//!
//! [`output`] writes a sorted stream as a run's files; [`subcompaction`] cuts one merge into key ranges merged
//! side by side, each through [`output`]; this module carries a plan out with both.

pub mod output;
pub mod subcompaction;

use crate::error::Result;
use crate::planner::{FileView, LevelView, Plan, RunView};
use crate::runfile::RunFile;
use crate::version::{Level, Run, Version};
use std::sync::atomic::Ordering;
use std::sync::Arc;
use subcompaction::{merge_inputs, Inputs};

pub use output::{file_path, write_entries, Output};

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

//! Subcompactions: one merge cut into key ranges of about equal input bytes, each merged by its own thread
//! (`Design.threads`), the outputs joined in key order.

use super::output::{write_entries, Output};
use crate::error::Result;
use crate::merge::{EntryIter, MergeIter, RunIter, Source};
use crate::runfile::RunFile;
use std::sync::atomic::Ordering;
use std::sync::Arc;

/// The inputs of one merge: the files of each sorted source (newest source first) and the level each is read
/// from (for the I/O counters).
pub(crate) type Inputs = Vec<(Vec<Arc<RunFile>>, usize)>;

/// Key bounds `[lo, hi)` of one subcompaction; `None` is unbounded.
pub type KeyRange = (Option<Vec<u8>>, Option<Vec<u8>>);

/// Splits a merge of `inputs` into at most `parts` key ranges of about equal input bytes, cut where a file
/// starts or one of its index blocks does ([`RunFile::cut_points`]), so each range can be merged by its own
/// thread. Fewer ranges when the inputs are too small for every range to fill an output file of `file_bytes`.
pub fn split_ranges(inputs: &Inputs, parts: usize, file_bytes: u64) -> Vec<KeyRange> {
    let total: u64 = inputs
        .iter()
        .flat_map(|(files, _)| files.iter())
        .map(|f| f.meta.size)
        .sum();
    let parts = parts
        .min((total / file_bytes.max(1)).max(1) as usize)
        .max(1);
    if parts == 1 {
        return vec![(None, None)];
    }
    let mut bounds: Vec<(&[u8], u64)> = inputs
        .iter()
        .flat_map(|(files, _)| files.iter())
        .flat_map(|f| f.cut_points())
        .collect();
    bounds.sort();
    let mut cuts: Vec<Vec<u8>> = Vec::new();
    let mut seen = 0u64;
    for (key, size) in bounds {
        // cut before this file when the bytes before it reach the next share
        let share = total * (cuts.len() as u64 + 1) / parts as u64;
        if seen >= share && cuts.len() + 1 < parts && cuts.last().is_none_or(|c| c.as_slice() < key)
        {
            cuts.push(key.to_vec());
        }
        seen += size;
    }
    let mut ranges = Vec::with_capacity(cuts.len() + 1);
    let mut lo = None;
    for c in cuts {
        ranges.push((lo, Some(c.clone())));
        lo = Some(c);
    }
    ranges.push((lo, None));
    ranges
}

/// Merges `inputs` (newest first) into one run's files, split by key range over `out.threads` threads. The
/// ranges are disjoint and ordered, so their files concatenate into one sorted run.
pub(crate) fn merge_inputs(
    inputs: &Inputs,
    drop_tombstones: bool,
    out: &Output<'_>,
) -> Result<(Vec<Arc<RunFile>>, u64)> {
    let ranges = split_ranges(inputs, out.threads.max(1), out.file_bytes);
    let merge_range = |(lo, hi): &KeyRange| -> Result<(Vec<Arc<RunFile>>, u64)> {
        let sources = inputs
            .iter()
            .map(|(files, level)| {
                // only the files that reach into [lo, hi)
                let files: Vec<Arc<RunFile>> = files
                    .iter()
                    .filter(|f| hi.as_ref().is_none_or(|h| f.meta.min_key < *h))
                    .cloned()
                    .collect();
                Source::Run(RunIter::new(
                    files,
                    lo.as_deref(),
                    Some((out.stats.clone(), *level, true)),
                ))
            })
            .collect();
        let mut merge = MergeIter::new(sources)?;
        write_entries(
            || {
                Ok(merge
                    .next_entry()?
                    .filter(|(k, _, _)| hi.as_ref().is_none_or(|h| k < h)))
            },
            drop_tombstones,
            out,
        )
    };
    if ranges.len() == 1 {
        return merge_range(&ranges[0]);
    }
    let results: Vec<Result<(Vec<Arc<RunFile>>, u64)>> = std::thread::scope(|scope| {
        // a range whose thread the OS refuses is merged on this thread, after the first
        let handles: Vec<_> = ranges[1..]
            .iter()
            .map(|r| {
                std::thread::Builder::new()
                    .name("cosine-subcompaction".into())
                    .spawn_scoped(scope, || merge_range(r))
                    .map_err(|_| r)
            })
            .collect();
        let mut results = vec![merge_range(&ranges[0])];
        results.extend(handles.into_iter().map(|h| match h {
            // a panic in a merge is a bug: carry it to the caller's thread as it is
            Ok(h) => h.join().unwrap_or_else(|p| std::panic::resume_unwind(p)),
            Err(r) => merge_range(r),
        }));
        results
    });
    let mut files = Vec::new();
    let mut bytes = 0;
    let mut productive = 0;
    for r in results {
        let (f, b) = r?;
        productive += u64::from(!f.is_empty());
        files.extend(f);
        bytes += b;
    }
    // ranges beside the first that wrote something
    out.stats
        .subcompactions
        .fetch_add(productive.saturating_sub(1), Ordering::Relaxed);
    Ok((files, bytes))
}

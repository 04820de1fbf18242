//! Merging sorted sources newest-first: the mechanism behind compactions and range scans.

use crate::error::Result;
use crate::runfile::{Entry, FileIter, RunFile};
use crate::stats::IoStats;
use std::cmp::Reverse;
use std::collections::{BinaryHeap, VecDeque};
use std::sync::Arc;

/// A sorted stream of entries whose every step can fail with an I/O or corruption error: the one iterator
/// shape of the read path and of compactions (a file, a run, a buffer page, a merge of any of them). A source
/// that cannot fail (a buffer) is one too, through [`Source::Lazy`].
pub trait EntryIter {
    /// The next entry in key order, `Ok(None)` at the end.
    fn next_entry(&mut self) -> Result<Option<Entry>>;
}

/// Iterates the files of one run in key order, from a start key.
pub struct RunIter {
    files: VecDeque<Arc<RunFile>>,
    cur: Option<FileIter>,
    start: Option<Vec<u8>>,
    stats: Option<(Arc<IoStats>, usize, bool)>,
    expect: Option<f64>,
    /// Entries yielded so far (what a file opened later no longer expects).
    yielded: u64,
}

impl RunIter {
    /// Iterates `files` (in key order) from `start`; `stats` = (counters, level, is_compaction).
    pub fn new(
        files: Vec<Arc<RunFile>>,
        start: Option<&[u8]>,
        stats: Option<(Arc<IoStats>, usize, bool)>,
    ) -> Self {
        let files: VecDeque<Arc<RunFile>> = match start {
            Some(s) => files
                .into_iter()
                .filter(|f| f.meta.max_key.as_slice() >= s)
                .collect(),
            None => files.into(),
        };
        RunIter {
            files,
            cur: None,
            start: start.map(|s| s.to_vec()),
            stats,
            expect: None,
            yielded: 0,
        }
    }

    /// This iterator for a scan that expects `entries` entries from the run: each file it opens reads ahead
    /// what those not yet yielded take ([`FileIter::expecting`]).
    pub fn expecting(mut self, entries: f64) -> Self {
        self.expect = Some(entries);
        self
    }
}

impl EntryIter for RunIter {
    fn next_entry(&mut self) -> Result<Option<Entry>> {
        loop {
            if let Some(it) = &mut self.cur {
                if let Some(e) = it.next_entry()? {
                    self.yielded += 1;
                    return Ok(Some(e));
                }
                self.cur = None;
            }
            let Some(f) = self.files.pop_front() else {
                return Ok(None);
            };
            let it = FileIter::new(f, self.start.as_deref(), self.stats.clone())?;
            self.cur = Some(match self.expect {
                Some(entries) => it.expecting(entries - self.yielded as f64),
                None => it,
            });
        }
    }
}

/// A sorted source.
#[allow(clippy::large_enum_variant)] // a handful per merge; boxing buys nothing
pub enum Source {
    /// A run on disk.
    Run(RunIter),
    /// Entries in memory, in key order, produced on demand (a scan paging through a live buffer).
    Lazy(Box<dyn Iterator<Item = Entry> + Send>),
}

impl EntryIter for Source {
    fn next_entry(&mut self) -> Result<Option<Entry>> {
        match self {
            Source::Run(r) => r.next_entry(),
            Source::Lazy(it) => Ok(it.next()),
        }
    }
}

/// Merges sources given newest first: yields each key once, with its newest version (tombstones included).
/// Generic over its sources, so a merge of merges or of any [`EntryIter`] works the same way.
pub struct MergeIter<S: EntryIter = Source> {
    sources: Vec<S>,
    heads: Vec<Option<Entry>>,
    heap: BinaryHeap<Reverse<(Vec<u8>, usize)>>,
}

impl<S: EntryIter> MergeIter<S> {
    /// A merge of `sources`, newest first.
    pub fn new(mut sources: Vec<S>) -> Result<Self> {
        let mut heads = Vec::with_capacity(sources.len());
        let mut heap = BinaryHeap::new();
        for (rank, s) in sources.iter_mut().enumerate() {
            let e = s.next_entry()?;
            if let Some(e) = &e {
                heap.push(Reverse((e.0.clone(), rank)));
            }
            heads.push(e);
        }
        Ok(MergeIter {
            sources,
            heads,
            heap,
        })
    }

    fn advance(&mut self, rank: usize) -> Result<Option<Entry>> {
        let taken = self.heads[rank].take();
        let next = self.sources[rank].next_entry()?;
        if let Some(e) = &next {
            self.heap.push(Reverse((e.0.clone(), rank)));
        }
        self.heads[rank] = next;
        Ok(taken)
    }
}

impl<S: EntryIter> EntryIter for MergeIter<S> {
    /// The next key's newest version.
    fn next_entry(&mut self) -> Result<Option<Entry>> {
        let Some(Reverse((key, rank))) = self.heap.pop() else {
            return Ok(None);
        };
        let entry = self.advance(rank)?;
        while let Some(Reverse((k, _))) = self.heap.peek() {
            if *k != key {
                break;
            }
            let Some(Reverse((_, older))) = self.heap.pop() else {
                break;
            };
            self.advance(older)?;
        }
        Ok(entry)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn mem(v: &[(&str, u64, Option<&str>)]) -> Source {
        Source::Lazy(Box::new(
            v.iter()
                .map(|(k, s, x)| (k.as_bytes().to_vec(), *s, x.map(|x| x.as_bytes().to_vec())))
                .collect::<Vec<_>>()
                .into_iter(),
        ))
    }

    #[test]
    fn newest_wins() {
        let mut m = MergeIter::new(vec![
            mem(&[("b", 9, Some("new")), ("d", 8, None)]),
            mem(&[
                ("a", 1, Some("a")),
                ("b", 2, Some("old")),
                ("d", 3, Some("d")),
            ]),
        ])
        .unwrap();
        let mut out = Vec::new();
        while let Some(e) = m.next_entry().unwrap() {
            out.push(e);
        }
        assert_eq!(out.len(), 3);
        assert_eq!(out[1].2.as_deref(), Some(&b"new"[..]));
        assert_eq!(out[2].2, None);
    }
}

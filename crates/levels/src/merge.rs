//! Merging sorted sources newest-first: the mechanism behind compactions and range scans.

use crate::error::Result;
pub use crate::runfile::EntryIter;
use crate::runfile::{Entry, FileIter, RunFile};
use crate::stats::IoStats;
use std::collections::VecDeque;
use std::sync::Arc;

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

/// A min-heap of source ranks ordered by their heads' keys, then by rank (the newest source first). The keys
/// are compared where they lie, in the heads: a heap of (key, rank) pairs copied each key, an allocation per
/// entry per merge, on every scan and compaction.
struct RankHeap {
    ranks: Vec<usize>,
}

impl RankHeap {
    fn key(heads: &[Option<Entry>], rank: usize) -> &[u8] {
        // a rank in the heap has a head (an exhausted source is never pushed)
        heads[rank].as_ref().map_or(&[][..], |e| e.0.as_slice())
    }

    fn less(heads: &[Option<Entry>], a: usize, b: usize) -> bool {
        (Self::key(heads, a), a) < (Self::key(heads, b), b)
    }

    fn peek(&self) -> Option<usize> {
        self.ranks.first().copied()
    }

    fn push(&mut self, heads: &[Option<Entry>], rank: usize) {
        self.ranks.push(rank);
        let mut i = self.ranks.len() - 1;
        while i > 0 {
            let parent = (i - 1) / 2;
            if !Self::less(heads, self.ranks[i], self.ranks[parent]) {
                break;
            }
            self.ranks.swap(i, parent);
            i = parent;
        }
    }

    fn pop(&mut self, heads: &[Option<Entry>]) -> Option<usize> {
        if self.ranks.is_empty() {
            return None;
        }
        let top = self.ranks.swap_remove(0);
        let n = self.ranks.len();
        let mut i = 0;
        loop {
            let (l, r) = (2 * i + 1, 2 * i + 2);
            let mut least = i;
            if l < n && Self::less(heads, self.ranks[l], self.ranks[least]) {
                least = l;
            }
            if r < n && Self::less(heads, self.ranks[r], self.ranks[least]) {
                least = r;
            }
            if least == i {
                break;
            }
            self.ranks.swap(i, least);
            i = least;
        }
        Some(top)
    }
}

/// Merges sources given newest first: yields each key once, with its newest version (tombstones included).
/// Generic over its sources, so a merge of merges or of any [`EntryIter`] works the same way.
pub struct MergeIter<S: EntryIter = Source> {
    sources: Vec<S>,
    heads: Vec<Option<Entry>>,
    heap: RankHeap,
}

impl<S: EntryIter> MergeIter<S> {
    /// A merge of `sources`, newest first.
    pub fn new(mut sources: Vec<S>) -> Result<Self> {
        let mut heads = Vec::with_capacity(sources.len());
        for s in sources.iter_mut() {
            heads.push(s.next_entry()?);
        }
        let mut heap = RankHeap {
            ranks: Vec::with_capacity(sources.len()),
        };
        for rank in 0..heads.len() {
            if heads[rank].is_some() {
                heap.push(&heads, rank);
            }
        }
        Ok(MergeIter {
            sources,
            heads,
            heap,
        })
    }

    /// Takes source `rank`'s head (popped from the heap) and puts its next entry in the heap.
    fn advance(&mut self, rank: usize) -> Result<Option<Entry>> {
        let taken = self.heads[rank].take();
        self.heads[rank] = self.sources[rank].next_entry()?;
        if self.heads[rank].is_some() {
            self.heap.push(&self.heads, rank);
        }
        Ok(taken)
    }
}

impl<S: EntryIter> EntryIter for MergeIter<S> {
    /// The next key's newest version.
    fn next_entry(&mut self) -> Result<Option<Entry>> {
        let Some(rank) = self.heap.pop(&self.heads) else {
            return Ok(None);
        };
        let entry = self.advance(rank)?;
        let Some(key) = entry.as_ref().map(|e| e.0.as_slice()) else {
            return Ok(None);
        };
        // older versions of the same key, in the older sources: skipped
        while let Some(older) = self.heap.peek() {
            if RankHeap::key(&self.heads, older) != key {
                break;
            }
            self.heap.pop(&self.heads);
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

    proptest::proptest! {
        /// Against a model: each key once, in order, from the newest source that holds it, whatever the sources
        /// (the heap of ranks compares keys in place; ties go to the newest).
        #[test]
        fn the_merge_yields_each_key_once_from_its_newest_source(
            sources in proptest::collection::vec(
                proptest::collection::btree_map(
                    proptest::collection::vec(0u8..4, 0..3),
                    proptest::option::of(0u8..255),
                    0..12,
                ),
                0..7,
            )
        ) {
            let mut want = std::collections::BTreeMap::new();
            for (rank, src) in sources.iter().enumerate() {
                for (k, v) in src {
                    want.entry(k.clone()).or_insert((rank as u64, v.map(|v| vec![v])));
                }
            }
            let merge_sources = sources
                .iter()
                .enumerate()
                .map(|(rank, src)| {
                    let entries: Vec<Entry> = src
                        .iter()
                        .map(|(k, v)| (k.clone(), rank as u64, v.map(|v| vec![v])))
                        .collect();
                    Source::Lazy(Box::new(entries.into_iter()))
                })
                .collect();
            let mut m = MergeIter::new(merge_sources).unwrap();
            let mut got = Vec::new();
            while let Some(e) = m.next_entry().unwrap() {
                got.push(e);
            }
            let want: Vec<Entry> = want.into_iter().map(|(k, (seq, v))| (k, seq, v)).collect();
            proptest::prop_assert_eq!(got, want);
        }
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

//! The read path: point lookups and streaming ranges over the buffers and the runs.

use super::*;

/// Most entries a range copies from a buffer at a time (unless a scan's limit asks for more at once).
const MAX_PAGE: usize = 1024;

/// Pages through a live buffer in key order for a scan: it copies a chunk of entries at a time (first the
/// scan's limit, doubling when tombstones or newer runs make the merge ask for more), never the whole buffer.
pub(super) struct BufferCursor {
    buffer: Arc<Buffer>,
    next: Bound<Vec<u8>>,
    end: Bound<Vec<u8>>,
    chunk: std::vec::IntoIter<(Vec<u8>, u64, Option<Vec<u8>>)>,
    batch: usize,
    exhausted: bool,
}

impl BufferCursor {
    /// A cursor whose first page is `first` entries (at least 2: the merge needs the buffer's next key
    /// past the scan's end to know it is done), doubling from there up to a bounded page.
    pub(super) fn new(
        buffer: Arc<Buffer>,
        start: Bound<&[u8]>,
        end: Bound<&[u8]>,
        first: usize,
    ) -> Self {
        BufferCursor {
            buffer,
            next: start.map(<[u8]>::to_vec),
            end: end.map(<[u8]>::to_vec),
            chunk: Vec::new().into_iter(),
            batch: first.clamp(2, MAX_PAGE),
            exhausted: false,
        }
    }
}

impl Iterator for BufferCursor {
    type Item = (Vec<u8>, u64, Option<Vec<u8>>);

    fn next(&mut self) -> Option<Self::Item> {
        if let Some(e) = self.chunk.next() {
            return Some(e);
        }
        if self.exhausted {
            return None;
        }
        let got = self
            .buffer
            .range(borrowed(&self.next), borrowed(&self.end), self.batch);
        self.exhausted = got.len() < self.batch;
        // pages double up to a bound, so a long range never copies a whole buffer at once
        if self.batch < MAX_PAGE {
            self.batch = (self.batch * 2).min(MAX_PAGE);
        }
        if let Some(last) = got.last() {
            self.next = Bound::Excluded(last.0.clone());
        }
        self.chunk = got.into_iter();
        self.chunk.next()
    }
}

pub(super) fn borrowed(b: &Bound<Vec<u8>>) -> Bound<&[u8]> {
    match b {
        Bound::Included(k) => Bound::Included(k.as_slice()),
        Bound::Excluded(k) => Bound::Excluded(k.as_slice()),
        Bound::Unbounded => Bound::Unbounded,
    }
}

impl Inner {
    /// A point lookup of the live state: the entry cache, the buffers, then the runs. A value read from the
    /// runs is cached (one in a buffer costs no I/O; the cache keeps memory for the others).
    pub(super) fn get(&self, key: &[u8]) -> Result<Option<Vec<u8>>> {
        self.get_filling(key, true)
    }

    /// [`Inner::get`], caching a value read from the runs only when `fill` (a read-modify-write does not: it
    /// overwrites the key at once, and the model counts only lookups as the cache's fillers; a cached value
    /// still answers it).
    pub(super) fn get_filling(&self, key: &[u8], fill: bool) -> Result<Option<Vec<u8>>> {
        let ticket = match &self.cache {
            Some(c) => match c.lookup(key) {
                Ok(v) => return Ok(Some(v)),
                Err(t) => Some(t),
            },
            None => None,
        };
        // the buffers are probed under the state's read lock (memory only, no I/O): no buffer's reference
        // count is touched, which two threads' lookups would otherwise bounce between their cores
        let version = {
            let s = self.state.read();
            if let Some((_, v)) = s.mem.get(key) {
                return Ok(v);
            }
            // the frozen buffers, then the hybrid log's read-only region: records already in the runs, newer
            // than anything the runs hold for their keys unless a buffer above holds a newer one
            let buffers = s.frozen.iter().map(|f| &f.buffer).chain(&s.read_only);
            for b in buffers {
                if let Some((_, v)) = b.get(key) {
                    return Ok(v);
                }
            }
            s.version.clone()
        };
        let v = self.lookup(&[], &version, key)?;
        if let (Some(c), Some(t), Some(v), true) = (&self.cache, ticket, &v, fill) {
            c.fill(key, v, t);
        }
        Ok(v)
    }

    /// A point lookup over `buffers` (newest first), then the runs of `version`.
    pub(super) fn lookup(
        &self,
        buffers: &[Arc<Buffer>],
        version: &Version,
        key: &[u8],
    ) -> Result<Option<Vec<u8>>> {
        for b in buffers {
            if let Some((_, v)) = b.get(key) {
                return Ok(v);
            }
        }
        for (i, level) in version.levels.iter().enumerate() {
            for run in &level.runs {
                if let Some(f) = run.file_for(key) {
                    if let Some((_, v)) = f.get(key, &self.stats, i + 1)? {
                        IoStats::bump(&self.stats.level(i + 1).found);
                        return Ok(v);
                    }
                }
            }
        }
        Ok(None)
    }

    /// A streaming merge over `buffers` (newest first) and the runs of `version`, from `start` to `end`.
    /// `chunk` is how many entries a live buffer is paged by at first (a scan's limit).
    pub(super) fn range(
        &self,
        buffers: &[Arc<Buffer>],
        version: &Version,
        start: Bound<&[u8]>,
        end: Bound<&[u8]>,
        chunk: usize,
        expect: Option<usize>,
    ) -> Result<Range> {
        let seek = match start {
            Bound::Included(k) | Bound::Excluded(k) => Some(k),
            Bound::Unbounded => None,
        };
        // A scan of a known length expects each run and each buffer to hold its share of the entries it yields
        // (its entries over all the runs' and buffers': versions and tombstones counted, a heuristic). A limit
        // at or above everything stored says nothing of the scan's length (a range read whole, `usize::MAX`):
        // no hint then.
        let buffered: u64 = buffers.iter().map(|b| b.len() as u64).sum();
        let expect = expect.and_then(|n| {
            let stored = version.entries() + buffered;
            (stored > 0 && (n as u64) < stored).then_some((n as f64, stored as f64))
        });
        let mut sources = Vec::new();
        for b in buffers {
            // a sorted buffer's first page is its share of the scan and one more (a scan of 50 entries over a
            // buffer holding 1% of the data copies 2 entries from it, not 51 with their values); a hash-log
            // buffer passes over all its keys for every page, so it keeps one page of the scan's limit and one
            // more (at least 16), as does a scan without a hint
            let whole = chunk.saturating_add(1).max(16);
            let first = match (expect, &**b) {
                (Some((n, stored)), Buffer::Sorted(_)) => {
                    (n * b.len() as f64 / stored).ceil() as usize + 1
                }
                _ => whole,
            };
            sources.push(Source::Lazy(Box::new(BufferCursor::new(
                b.clone(),
                start,
                end,
                first,
            ))));
        }
        for (i, level) in version.levels.iter().enumerate() {
            for run in &level.runs {
                let it = RunIter::new(
                    run.files.clone(),
                    seek,
                    Some((self.stats.clone(), i + 1, false)),
                );
                sources.push(Source::Run(match expect {
                    Some((n, stored)) => it.expecting(n * run.entries() as f64 / stored),
                    None => it,
                }));
            }
        }
        Ok(Range {
            merge: MergeIter::new(sources)?,
            start: start.map(<[u8]>::to_vec),
            end: end.map(<[u8]>::to_vec),
            done: false,
        })
    }

    /// A range over the live state: the active buffer, the frozen ones and the current version.
    pub(super) fn range_live(
        &self,
        start: Bound<&[u8]>,
        end: Bound<&[u8]>,
        chunk: usize,
        expect: Option<usize>,
    ) -> Result<Range> {
        let (mem, mut frozen, version) = self.state.read().snapshot();
        frozen.insert(0, mem);
        self.range(&frozen, &version, start, end, chunk, expect)
    }
}

/// A streaming iterator over the live entries of a key range, in key order: `Engine::range` and
/// `Snapshot::range` return it. It holds one page of each buffer (up to about a thousand entries) and one block
/// of each run at a time, so a scan of any length takes bounded memory; a failed read or a checksum mismatch
/// ends it with an error.
pub struct Range {
    merge: MergeIter,
    start: Bound<Vec<u8>>,
    end: Bound<Vec<u8>>,
    done: bool,
}

impl Iterator for Range {
    type Item = Result<(Vec<u8>, Vec<u8>)>;

    fn next(&mut self) -> Option<Self::Item> {
        while !self.done {
            let (k, _, v) = match self.merge.next_entry() {
                Ok(Some(e)) => e,
                Ok(None) => break,
                Err(e) => {
                    self.done = true;
                    return Some(Err(e.into()));
                }
            };
            if matches!(&self.start, Bound::Excluded(s) if k <= *s) {
                continue;
            }
            let before_end = match &self.end {
                Bound::Included(e) => k <= *e,
                Bound::Excluded(e) => k < *e,
                Bound::Unbounded => true,
            };
            if !before_end {
                break;
            }
            if let Some(v) = v {
                return Some(Ok((k, v)));
            }
        }
        self.done = true;
        None
    }
}

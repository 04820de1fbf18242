//! The read path: point lookups and scans over the buffers and the runs.

use super::*;

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
    pub(super) fn new(
        buffer: Arc<Buffer>,
        start: Bound<&[u8]>,
        end: Bound<&[u8]>,
        limit: usize,
    ) -> Self {
        BufferCursor {
            buffer,
            next: start.map(<[u8]>::to_vec),
            end: end.map(<[u8]>::to_vec),
            chunk: Vec::new().into_iter(),
            batch: limit.saturating_add(1).max(16),
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
        self.batch = self.batch.saturating_mul(2);
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
    pub(super) fn get(&self, key: &[u8]) -> Result<Option<Vec<u8>>> {
        let (mem, frozen, version) = self.state.read().snapshot();
        if let Some((_, v)) = mem.get(key) {
            return Ok(v);
        }
        for b in &frozen {
            if let Some((_, v)) = b.get(key) {
                return Ok(v);
            }
        }
        for (i, level) in version.levels.iter().enumerate() {
            for run in &level.runs {
                if let Some(f) = run.file_for(key) {
                    if let Some((_, v)) = f.get(key, &self.stats, i + 1)? {
                        return Ok(v);
                    }
                }
            }
        }
        Ok(None)
    }

    pub(super) fn scan(
        &self,
        start: Bound<&[u8]>,
        end: Bound<&[u8]>,
        limit: usize,
    ) -> Result<Vec<(Vec<u8>, Vec<u8>)>> {
        if limit == 0 {
            return Ok(Vec::new());
        }
        let (mem, frozen, version) = self.state.read().snapshot();
        let seek = match start {
            Bound::Included(k) | Bound::Excluded(k) => Some(k),
            Bound::Unbounded => None,
        };
        let mut sources = vec![Source::Lazy(Box::new(BufferCursor::new(
            mem, start, end, limit,
        )))];
        for b in frozen {
            sources.push(Source::Lazy(Box::new(BufferCursor::new(
                b, start, end, limit,
            ))));
        }
        for (i, level) in version.levels.iter().enumerate() {
            for run in &level.runs {
                sources.push(Source::Run(RunIter::new(
                    run.files.clone(),
                    seek,
                    Some((self.stats.clone(), i + 1, false)),
                )));
            }
        }
        let mut merge = MergeIter::new(sources)?;
        let mut out = Vec::new();
        while let Some((k, _, v)) = merge.next_entry()? {
            let after_start = match start {
                Bound::Excluded(s) => k.as_slice() > s,
                _ => true,
            };
            let before_end = match end {
                Bound::Included(e) => k.as_slice() <= e,
                Bound::Excluded(e) => k.as_slice() < e,
                Bound::Unbounded => true,
            };
            if !before_end {
                break;
            }
            if let (true, Some(v)) = (after_start, v) {
                out.push((k, v));
                if out.len() >= limit {
                    break;
                }
            }
        }
        Ok(out)
    }
}

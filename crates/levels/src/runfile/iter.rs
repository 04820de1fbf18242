//! Iterating a run file in key order, one block at a time.

use super::*;

/// How a file iterator finds its next data block: through in-memory fences (hot files) or by walking the
/// on-disk index blocks from the top index (cold files), one index block at a time.
pub(super) enum Blocks {
    Resident {
        fences: Arc<Fences>,
        next: usize,
    },
    Cascade {
        next_index: usize,
        current: Option<(Fences, usize)>,
    },
}

/// The first readahead of a scan in one file, once it reads a second block there (RocksDB's auto readahead
/// starts alike).
pub const SCAN_READAHEAD_START: u64 = 8 << 10;
/// The most a scan reads ahead in one file: the window doubles each time the scan reaches it.
pub const SCAN_READAHEAD_MAX: u64 = 256 << 10;

/// Iterates a file's entries from the first key ≥ `start`, one block at a time.
///
/// A compaction reads the whole file through its sequential handle, and the kernel reads ahead for it. A scan
/// reads through the lookups' handle (advised random: the kernel reads nothing ahead) and reads ahead itself,
/// RocksDB-style: from its second block on it asks the OS for the next [`SCAN_READAHEAD_START`] bytes, twice as
/// many each time it reaches the end of what it asked for, up to [`SCAN_READAHEAD_MAX`]. A short scan so reads
/// about what it uses, where the kernel's window brought in up to 128 KiB per file touched.
pub struct FileIter {
    file: Arc<RunFile>,
    blocks: Blocks,
    block: std::vec::IntoIter<Entry>,
    start: Option<Vec<u8>>,
    stats: Option<(Arc<IoStats>, usize, bool)>,
    /// Data blocks this iterator has read.
    read: u64,
    /// The file offset up to which the scan has asked the OS to read ahead, and the next window.
    ahead: (u64, u64),
}

impl FileIter {
    /// An iterator over `file` from `start` (inclusive); `stats` = (counters, level, is_compaction).
    pub fn new(
        file: Arc<RunFile>,
        start: Option<&[u8]>,
        stats: Option<(Arc<IoStats>, usize, bool)>,
    ) -> Result<Self> {
        let blocks = match file.resident_fences() {
            Some(fences) => {
                let next = start.and_then(|s| fences.find(s)).unwrap_or(0);
                Blocks::Resident { fences, next }
            }
            None => {
                let next_index = start.and_then(|s| file.top.0.find(s)).unwrap_or(0);
                Blocks::Cascade {
                    next_index,
                    current: None,
                }
            }
        };
        Ok(FileIter {
            file,
            blocks,
            block: Vec::new().into_iter(),
            start: start.map(|s| s.to_vec()),
            stats,
            read: 0,
            ahead: (0, SCAN_READAHEAD_START),
        })
    }

    fn compaction(&self) -> bool {
        self.stats.as_ref().is_some_and(|s| s.2)
    }

    /// Reads block `h`: a compaction through the sequential handle, a scan through the lookups' handle with its
    /// own growing readahead.
    fn read(&mut self, h: BlockHandle) -> Result<Vec<Entry>> {
        self.read += 1;
        if self.compaction() {
            return self.file.read_block_sequentially(h);
        }
        let end = h.offset + u64::from(h.len);
        if self.read >= 2 && end >= self.ahead.0 {
            let window = self.ahead.1;
            self.file.prefetch(end, window);
            self.ahead = (end + window, (window * 2).min(SCAN_READAHEAD_MAX));
        }
        self.file.read_block(h)
    }

    pub(super) fn count(&self, index: bool) {
        if let Some((stats, level, compaction)) = &self.stats {
            let c = stats.level(*level);
            match (index, *compaction) {
                (_, true) => IoStats::bump(&c.compaction_reads),
                (true, false) => IoStats::bump_read(&c.index_reads),
                (false, false) => IoStats::bump_read(&c.block_reads),
            }
        }
    }

    /// The next data block's handle, reading index blocks as needed.
    pub(super) fn next_handle(&mut self) -> Result<Option<BlockHandle>> {
        loop {
            match &mut self.blocks {
                Blocks::Resident { fences, next } => {
                    if *next >= fences.len() {
                        return Ok(None);
                    }
                    *next += 1;
                    return Ok(Some(fences.handle(*next - 1)));
                }
                Blocks::Cascade {
                    next_index,
                    current,
                } => {
                    if let Some((fences, pos)) = current {
                        if *pos < fences.len() {
                            *pos += 1;
                            return Ok(Some(fences.handle(*pos - 1)));
                        }
                    }
                    if *next_index >= self.file.top.0.len() {
                        return Ok(None);
                    }
                    let ib = self
                        .file
                        .read_index_block(self.file.top.0.handle(*next_index))?;
                    *next_index += 1;
                    let pos = match &self.start {
                        Some(s) => ib.find(s).unwrap_or(0),
                        None => 0,
                    };
                    *current = Some((ib, pos));
                    self.count(true);
                }
            }
        }
    }
}

impl crate::merge::EntryIter for FileIter {
    fn next_entry(&mut self) -> Result<Option<Entry>> {
        loop {
            if let Some(e) = self.block.next() {
                if let Some(s) = &self.start {
                    if e.0 < *s {
                        continue;
                    }
                    self.start = None;
                }
                return Ok(Some(e));
            }
            let Some(h) = self.next_handle()? else {
                return Ok(None);
            };
            self.count(false);
            self.block = self.read(h)?.into_iter();
        }
    }
}

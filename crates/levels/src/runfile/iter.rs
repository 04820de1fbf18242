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
/// about what it uses, where the kernel's window brought in up to 128 KiB per file touched. A scan that knows
/// how many entries it expects from the file ([`FileIter::expecting`]) asks for the blocks they take at its
/// first block instead, all at once: the blocks arrive in one round trip to the device, not one per window
/// ([`Readahead`] decides).
pub struct FileIter {
    file: Arc<RunFile>,
    blocks: Blocks,
    /// The block being read and the next entry in it.
    block: Option<(Block, usize)>,
    start: Option<Vec<u8>>,
    stats: Option<(Arc<IoStats>, usize, bool)>,
    /// What the scan asks the OS to read ahead of the blocks it reads.
    ahead: Readahead,
    /// Where the data blocks end, when the file's fences are in memory: no scan reads ahead past them (into
    /// the index and filter sections, held in memory already).
    data_end: Option<u64>,
}

/// The readahead, in bytes past the block a scan starts in, that reaches the blocks of `entries` entries of a
/// file described by `meta` whose data blocks take `data_bytes` (None: unknown, the whole file's bytes are
/// used, index and filters included, a little more), as many blocks again as the entries fill (a scan may start
/// anywhere in its first block), at most [`SCAN_READAHEAD_MAX`]; 0 when they fit in one block or the file says
/// nothing of its blocks (the window then grows as it always does).
pub fn expected_readahead(entries: f64, meta: &FileMeta, data_bytes: Option<u64>) -> u64 {
    if meta.data_blocks == 0 || meta.entries == 0 || entries.is_nan() {
        return 0;
    }
    let per_block = meta.entries as f64 / f64::from(meta.data_blocks);
    if entries <= per_block {
        return 0;
    }
    let block = data_bytes.unwrap_or(meta.size) as f64 / f64::from(meta.data_blocks);
    ((entries / per_block).ceil() * block).min(SCAN_READAHEAD_MAX as f64) as u64
}

/// What a scan in one file asks the OS to read ahead of the blocks it reads (a pure policy; [`FileIter`] carries
/// it out).
///
/// Without a hint a scan streams, RocksDB-style: nothing ahead of its first block, then from its second block
/// on the next [`SCAN_READAHEAD_START`] bytes, asked for again, twice as many, each time it reads the last
/// block of what it asked for, up to [`SCAN_READAHEAD_MAX`]. With a hint (the bytes past its first block that
/// the entries it expects take) it asks at its first block for that block and the hint in one request, and
/// nothing more while it reads within them: the hint covers what it expects, so reaching the hint's last block
/// says nothing of needing more (streaming on from there asked for twice the hint each time a scan read its
/// whole share). A scan that reads past the hint streams from there as a scan without one does from its first
/// block: the block past the hint and the one after it are read each on its own, an accepted cost for scans
/// longer than their share (the hint is a run's mean share), then windows from the second on. Every request
/// stops at the data blocks' end where it is known (every scan of a file whose fences are in memory, given a
/// share or not): the index and filter sections after them are in memory already.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Readahead {
    phase: Phase,
    /// Where the window last asked for ends: a streaming scan asks again on reading a block that reaches it.
    until: u64,
    /// The next window a streaming scan asks for.
    window: u64,
}

/// Where a scan is in its readahead.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Phase {
    /// A hint of this many bytes past the first block, before the scan reads it.
    Hint(u64),
    /// Reading within the hint's window: nothing more until a block starts at or past `until`.
    WithinHint,
    /// The next block is a stream's first, read alone.
    StreamStart,
    /// Streaming: a window each time a block reaches `until`.
    Stream,
}

impl Default for Readahead {
    /// A scan without a hint.
    fn default() -> Self {
        Readahead {
            phase: Phase::StreamStart,
            until: 0,
            window: SCAN_READAHEAD_START,
        }
    }
}

impl Readahead {
    /// A scan whose expected entries take `bytes` past its first block ([`expected_readahead`]; 0: no hint).
    pub fn expecting(bytes: u64) -> Self {
        Readahead {
            phase: if bytes > 0 {
                Phase::Hint(bytes)
            } else {
                Phase::StreamStart
            },
            ..Readahead::default()
        }
    }

    /// The scan reads the block at `offset..end`; returns the range (offset, length) to ask the OS for, if
    /// any, never past `data_end` where it is known.
    pub fn on_read(&mut self, offset: u64, end: u64, data_end: Option<u64>) -> Option<(u64, u64)> {
        let clamp = |from: u64, len: u64| data_end.map_or(len, |d| len.min(d.saturating_sub(from)));
        match self.phase {
            Phase::Hint(bytes) => {
                // one request for this block and the hint after it: the block the scan reads now is not held
                // up behind a separate request for the rest (the block alone, as the first block is at the
                // data's end: the read that follows asks for it)
                let window = clamp(end, bytes);
                self.until = end + window;
                self.phase = Phase::WithinHint;
                (window > 0).then_some((offset, end - offset + window))
            }
            Phase::WithinHint if offset < self.until => None,
            // a stream's first block (past the hint, or a scan without one) is read alone; from the next on
            // the stream asks for windows
            Phase::WithinHint | Phase::StreamStart => {
                self.phase = Phase::Stream;
                self.until = 0;
                None
            }
            Phase::Stream if end >= self.until => {
                let window = self.window;
                self.until = end + window;
                self.window = (window * 2).min(SCAN_READAHEAD_MAX);
                let len = clamp(end, window);
                (len > 0).then_some((end, len))
            }
            Phase::Stream => None,
        }
    }
}

impl FileIter {
    /// An iterator over `file` from `start` (inclusive); `stats` = (counters, level, is_compaction).
    pub fn new(
        file: Arc<RunFile>,
        start: Option<&[u8]>,
        stats: Option<(Arc<IoStats>, usize, bool)>,
    ) -> Result<Self> {
        // where the data blocks end, when the fences say (a stream stops there: past it are the index and
        // filter sections, which a resident file holds in memory)
        let data_end = file
            .resident_fences()
            .and_then(|fences| fences.handles().last().map(|h| h.offset + u64::from(h.len)));
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
            block: None,
            start: start.map(|s| s.to_vec()),
            stats,
            ahead: Readahead::default(),
            data_end,
        })
    }

    /// This iterator for a scan that expects `entries` entries from the file: it reads ahead
    /// [`expected_readahead`] bytes at its first block, and streams only once it reads past them.
    pub fn expecting(mut self, entries: f64) -> Self {
        self.ahead =
            Readahead::expecting(expected_readahead(entries, &self.file.meta, self.data_end));
        self
    }

    fn compaction(&self) -> bool {
        self.stats.as_ref().is_some_and(|s| s.2)
    }

    /// Reads block `h`: a compaction through the sequential handle, a scan through the lookups' handle with its
    /// own growing readahead.
    fn read(&mut self, h: BlockHandle) -> Result<Block> {
        if self.compaction() {
            return self.file.read_block_sequentially(h);
        }
        let end = h.offset + u64::from(h.len);
        if let Some((offset, len)) = self.ahead.on_read(h.offset, end, self.data_end) {
            self.file.prefetch(offset, len);
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

impl super::EntryIter for FileIter {
    fn next_entry(&mut self) -> Result<Option<Entry>> {
        loop {
            if let Some((block, next)) = &mut self.block {
                if *next < block.len() {
                    let e = block.entry(*next);
                    *next += 1;
                    return Ok(Some(e));
                }
            }
            let Some(h) = self.next_handle()? else {
                return Ok(None);
            };
            self.count(false);
            let block = self.read(h)?;
            // a seek starts at the first key at or after its start, found in place: the entries before it
            // are never copied (a block past the start's holds none before it; the start is done with once
            // a block holds an entry at or after it)
            let next = match &self.start {
                Some(s) => block.lower_bound(s),
                None => 0,
            };
            if next < block.len() {
                self.start = None;
            }
            self.block = Some((block, next));
        }
    }
}

//! Reading a run file: opening and verifying it, point lookups through fences, filters or the hash index,
//! blocks and sections read and checked, and which parts are held in memory.

use super::locate::Locator;
use super::*;
use std::ops::ControlFlow;

pub(super) struct Cursor<'a> {
    buf: &'a [u8],
    pos: usize,
}

impl<'a> Cursor<'a> {
    pub(super) fn take(&mut self, n: usize) -> Option<&'a [u8]> {
        let end = self.pos.checked_add(n)?;
        let s = self.buf.get(self.pos..end)?;
        self.pos = end;
        Some(s)
    }
    pub(super) fn u32(&mut self) -> Option<u32> {
        Some(u32::from_le_bytes(self.take(4)?.try_into().ok()?))
    }
    pub(super) fn u64(&mut self) -> Option<u64> {
        Some(u64::from_le_bytes(self.take(8)?.try_into().ok()?))
    }
}

impl RunFile {
    /// Opens a file, verifying its footer, meta section and top index; loads its hash index if it has one.
    pub fn open(storage: &Storage, path: &Path, id: u64) -> Result<Self> {
        let file = storage.open_read(path).map_err(io(path))?;
        // lookups read a block here and there: no kernel readahead on this handle (only advice; a file system
        // that refuses it reads as before). Scans and compactions read through a second handle.
        let _ = file.advise_random();
        let size = file.len().map_err(io(path))?;
        if size < FOOTER_LEN as u64 {
            return Err(corrupt(path, 0, "file shorter than its footer"));
        }
        let foff = size - FOOTER_LEN as u64;
        let mut f = vec![0u8; FOOTER_LEN];
        file.read_exact_at(&mut f, foff).map_err(io(path))?;
        if &f[0..8] != MAGIC
            || crc(&f[..FOOTER_LEN - 4])
                != u32::from_le_bytes(f[FOOTER_LEN - 4..].try_into().unwrap_or([0; 4]))
        {
            return Err(corrupt(path, foff, "footer checksum or magic mismatch"));
        }
        let mut c = Cursor {
            buf: &f[8..],
            pos: 0,
        };
        let bad = || corrupt(path, foff, "footer does not decode");
        let version = c.u32().ok_or_else(bad)?;
        if version != FORMAT_VERSION {
            return Err(corrupt(
                path,
                foff,
                format!("unknown run format version {version}"),
            ));
        }
        let block_bytes = c.u32().ok_or_else(bad)?;
        let _index_off = c.u64().ok_or_else(bad)?;
        let index_len = c.u64().ok_or_else(bad)?;
        let mut secs = [(0u64, 0u32); 4];
        for s in secs.iter_mut() {
            *s = (c.u64().ok_or_else(bad)?, c.u32().ok_or_else(bad)?);
            if s.0 + s.1 as u64 > foff {
                return Err(corrupt(path, foff, "section beyond the end of the file"));
            }
        }
        let footer = Footer {
            block_bytes,
            top: secs[0],
            filter: secs[1],
            hash: secs[2],
            meta: secs[3],
        };
        let meta_bytes = read_section(file.as_ref(), path, footer.meta)?;
        let mut m = Cursor {
            buf: &meta_bytes,
            pos: 0,
        };
        let bad_meta = || corrupt(path, footer.meta.0, "meta section does not decode");
        let entries = m.u64().ok_or_else(bad_meta)?;
        let tombstones = m.u64().ok_or_else(bad_meta)?;
        let min_seq = m.u64().ok_or_else(bad_meta)?;
        let max_seq = m.u64().ok_or_else(bad_meta)?;
        let data_blocks = m.u32().ok_or_else(bad_meta)?;
        let kl = m.u32().ok_or_else(bad_meta)? as usize;
        let min_key = m.take(kl).ok_or_else(bad_meta)?.to_vec();
        let kl = m.u32().ok_or_else(bad_meta)? as usize;
        let max_key = m.take(kl).ok_or_else(bad_meta)?.to_vec();
        let top_bytes = read_section(file.as_ref(), path, footer.top)?;
        let top = TopIndex(
            Fences::decode(&top_bytes).map_err(|e| corrupt(path, footer.top.0, e.to_string()))?,
        );
        // a hash index's checksum and counts are verified here and its memory measured from them (what
        // residency weighs against M_FP); it is decoded only if the file is made hot, so opening a database or
        // finishing a compaction neither holds nor sorts more hash indexes than M_FP pays for
        let hash_bytes = if footer.hash.1 > 0 {
            let bytes = read_section(file.as_ref(), path, footer.hash)?;
            let mem = HashIndex::decoded_bytes(&bytes)
                .map_err(|e| corrupt(path, footer.hash.0, e.to_string()))?;
            Some(mem as u64)
        } else {
            None
        };
        Ok(RunFile {
            id,
            path: path.to_path_buf(),
            file,
            storage: storage.clone(),
            sequential: std::sync::OnceLock::new(),
            meta: FileMeta {
                entries,
                tombstones,
                min_seq,
                max_seq,
                data_blocks,
                min_key,
                max_key,
                size,
                blocks_written: 0,
                // each index block encodes its fences as in memory plus a count and a checksum (8 bytes); a
                // hash-indexed file holds its hash index instead
                fence_bytes: hash_bytes
                    .unwrap_or_else(|| index_len.saturating_sub(8 * top.0.len() as u64)),
            },
            footer,
            top,
            resident: RwLock::new(Residency {
                locator: Locator::OnDisk,
                filter: None,
            }),
        })
    }

    /// Keys at which a merge may cut this file, each with about the bytes of the file from it to the next:
    /// its smallest key, then the first fence of every further index block (one per index block of data
    /// blocks, so a 64 MiB file of 4 KiB blocks offers over a hundred).
    pub fn cut_points(&self) -> Vec<(&[u8], u64)> {
        let n = self.top.0.len().max(1) as u64;
        let share = self.meta.size / n;
        let mut points = vec![(self.meta.min_key.as_slice(), share + self.meta.size % n)];
        for i in 1..self.top.0.len() {
            let k = self.top.0.lower_bound(i);
            if k > self.meta.min_key.as_slice() && k <= self.meta.max_key.as_slice() {
                points.push((k, share));
            } else if let Some(first) = points.first_mut() {
                first.1 += share;
            }
        }
        points
    }

    /// Whether the file has a hash index (written by an LSH design).
    pub fn has_hash_index(&self) -> bool {
        self.footer.hash.1 > 0
    }

    /// The file's path.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Block size the file was written with.
    pub fn block_bytes(&self) -> u32 {
        self.footer.block_bytes
    }

    /// Makes the file hot (fences, and the filter if `with_filter`, loaded into memory) or cold (dropped).
    /// A hash-indexed file's hot locator is its hash index (it has no filter). Loading reads the index blocks,
    /// the hash section or the filter section once; what is already loaded stays.
    pub fn set_residency(&self, hot: bool, with_filter: bool) -> Result<()> {
        let hashed = self.footer.hash.1 > 0;
        let (locator, has_filter) = {
            let r = self.resident.read();
            (r.locator.clone(), r.filter.is_some())
        };
        let locator = match (hot, locator) {
            (false, _) => Locator::OnDisk,
            (true, Locator::OnDisk) if hashed => Locator::Hash(Arc::new(load_hash(
                self.file.as_ref(),
                &self.path,
                self.footer.hash,
            )?)),
            (true, Locator::OnDisk) => Locator::Fences(Arc::new(self.load_fences()?)),
            (true, loaded) => loaded,
        };
        let want_filter = hot && with_filter && !hashed && self.footer.filter.1 > 0;
        let filter = if want_filter && !has_filter {
            let bytes = read_section(self.file.as_ref(), &self.path, self.footer.filter)?;
            Some(Arc::new(FileFilter::decode(&bytes).map_err(|e| {
                corrupt(&self.path, self.footer.filter.0, e.to_string())
            })?))
        } else {
            None
        };
        let mut r = self.resident.write();
        r.locator = locator;
        if !want_filter {
            r.filter = None;
        } else if filter.is_some() {
            r.filter = filter;
        }
        Ok(())
    }

    pub(super) fn load_fences(&self) -> Result<Fences> {
        // sized from the file's block count and its fences' bytes (recorded when it was written), so the
        // fences' heap is what they count
        let blocks = self.meta.data_blocks as usize;
        let key_bytes = (self.meta.fence_bytes as usize)
            .saturating_sub(blocks * cosine_fence_pointers::FENCE_OVERHEAD_BYTES);
        let mut all = Fences::with_capacity(blocks, key_bytes);
        for i in 0..self.top.0.len() {
            let ib = self.read_index_block(self.top.0.handle(i))?;
            for j in 0..ib.len() {
                all.push(ib.lower_bound(j).to_vec(), ib.handle(j));
            }
        }
        all.shrink_to_fit();
        Ok(all)
    }

    /// Bytes of memory held: (fence pointers incl. the top and hash index, filters).
    pub fn memory_bytes(&self) -> (usize, usize) {
        let r = self.resident.read();
        let fences = r.locator.memory_bytes() + self.top.memory_bytes();
        (fences, r.filter.as_ref().map_or(0, |f| f.memory_bytes()))
    }

    /// True when the file has a filter loaded.
    pub fn has_filter(&self) -> bool {
        self.resident.read().filter.is_some()
    }

    pub(super) fn read_index_block(&self, h: BlockHandle) -> Result<Fences> {
        let bytes = read_section(self.file.as_ref(), &self.path, (h.offset, h.len))?;
        Fences::decode(&bytes).map_err(|e| corrupt(&self.path, h.offset, e.to_string()))
    }

    /// Reads and decodes one data block, verifying its checksum.
    pub fn read_block(&self, h: BlockHandle) -> Result<Block> {
        self.read_block_from(self.file.as_ref(), h)
    }

    /// Reads a data block through the file's sequential handle (compactions: the kernel reads ahead), opened on
    /// first use.
    pub fn read_block_sequentially(&self, h: BlockHandle) -> Result<Block> {
        let file = match self.sequential.get() {
            Some(f) => f,
            None => {
                let f = self.storage.open_read(&self.path).map_err(io(&self.path))?;
                self.sequential.get_or_init(|| f)
            }
        };
        self.read_block_from(file.as_ref(), h)
    }

    /// Starts the OS reading `len` bytes from `offset` through the lookups' handle (a scan's readahead; only
    /// advice, so a failure is ignored).
    pub fn prefetch(&self, offset: u64, len: u64) {
        // past the end the OS reads nothing
        let _ = self.file.prefetch(offset, len);
    }

    fn read_block_from(&self, file: &dyn ReadFile, h: BlockHandle) -> Result<Block> {
        let bytes = read_section(file, &self.path, (h.offset, h.len))?;
        Block::parse(bytes)
            .ok_or_else(|| corrupt(&self.path, h.offset, "data block does not decode"))
    }

    /// Point lookup: the newest version of `key` in this file, counting I/Os and filter probes in `stats` at
    /// `level`. Returns `Ok(None)` if the file does not hold the key.
    pub fn get(
        &self,
        key: &[u8],
        stats: &IoStats,
        level: usize,
    ) -> Result<Option<(u64, Option<Vec<u8>>)>> {
        if key < self.meta.min_key.as_slice() || key > self.meta.max_key.as_slice() {
            return Ok(None);
        }
        let counters = stats.level(level);
        let (locator, filter) = {
            let r = self.resident.read();
            (r.locator.clone(), r.filter.clone())
        };
        // a whole-file filter answers before the (possibly on-disk) index is consulted
        let whole_filter = filter.as_deref().is_some_and(FileFilter::is_whole_file);
        if let (true, Some(f)) = (whole_filter, &filter) {
            IoStats::bump(&counters.filter_probes);
            if !f.may_contain(key, None) {
                IoStats::bump(&counters.filter_negatives);
                return Ok(None);
            }
        }
        let found = locator.visit(self, key, counters, |handle| {
            // a per-block filter answers for the one block the locator named
            let filtered = match &filter {
                _ if whole_filter => true,
                Some(f) => {
                    IoStats::bump(&counters.filter_probes);
                    if !f.may_contain(key, Some(handle.block as usize)) {
                        IoStats::bump(&counters.filter_negatives);
                        return Ok(ControlFlow::Break(None));
                    }
                    true
                }
                None => false,
            };
            IoStats::bump_read(&counters.block_reads);
            let block = self.read_block(handle)?;
            match block.get(key) {
                Some(found) => Ok(ControlFlow::Break(Some(found))),
                // a hash index's next candidate may hold it; fences name only this block
                None if locator.is_hash() => Ok(ControlFlow::Continue(())),
                None => {
                    if filtered {
                        IoStats::bump(&counters.false_positives);
                    }
                    Ok(ControlFlow::Break(None))
                }
            }
        })?;
        Ok(found.flatten())
    }

    /// The in-memory fences if the file is hot.
    pub(super) fn resident_fences(&self) -> Option<Arc<Fences>> {
        match &self.resident.read().locator {
            Locator::Fences(f) => Some(f.clone()),
            _ => None,
        }
    }
}

/// Reads and decodes a file's hash index section.
pub(super) fn load_hash(file: &dyn ReadFile, path: &Path, sec: (u64, u32)) -> Result<HashIndex> {
    let bytes = read_section(file, path, sec)?;
    HashIndex::decode(&bytes).map_err(|e| corrupt(path, sec.0, e.to_string()))
}

pub(super) fn read_section(
    file: &dyn ReadFile,
    path: &Path,
    (off, len): (u64, u32),
) -> Result<Vec<u8>> {
    if len < 4 {
        return Err(corrupt(path, off, "section shorter than its checksum"));
    }
    let mut buf = vec![0u8; len as usize];
    file.read_exact_at(&mut buf, off)
        .map_err(|e| read_error(path, off, e))?;
    let n = verified(path, off, &buf)?.len();
    buf.truncate(n);
    Ok(buf)
}

fn read_error(path: &Path, off: u64, e: std::io::Error) -> Error {
    if e.kind() == std::io::ErrorKind::UnexpectedEof {
        corrupt(path, off, "section beyond the end of the file")
    } else {
        Error::Io {
            path: path.to_path_buf(),
            source: e,
        }
    }
}

/// A section's body after its trailing CRC32C has been checked.
fn verified<'b>(path: &Path, off: u64, section: &'b [u8]) -> Result<&'b [u8]> {
    if section.len() < 4 {
        return Err(corrupt(path, off, "section shorter than its checksum"));
    }
    let n = section.len() - 4;
    let stored = u32::from_le_bytes(section[n..].try_into().unwrap_or([0; 4]));
    if crc(&section[..n]) != stored {
        return Err(corrupt(path, off, "checksum mismatch"));
    }
    Ok(&section[..n])
}

//! Writing a run file: data blocks, index blocks, the top index, filters, the hash index, meta and footer.

use super::*;

/// Bytes a writer gathers before handing them to the file.
const WRITE_CHUNK: usize = 1 << 16;

/// Writes a run file; `finish` makes it durable.
pub struct RunFileWriter {
    path: PathBuf,
    file: Arc<dyn WriteFile>,
    /// Bytes not yet handed to the file (written in pieces of about 64 KiB).
    out: Vec<u8>,
    opts: WriterOptions,
    offset: u64,
    block: Vec<u8>,
    block_count: u32,
    block_fence: Option<Vec<u8>>,
    fences: Fences,
    /// The file's filter, built as keys are added (none without filter bits).
    filter: Option<FilterBuilder>,
    /// (key hash, block) of every key, for the hash index (LSH designs; 16 bytes a key until the file is
    /// finished, a file being at most the design's file size).
    hashes: Vec<(u64, u32)>,
    entries: u64,
    tombstones: u64,
    min_seq: u64,
    max_seq: u64,
    min_key: Option<Vec<u8>>,
    max_key: Vec<u8>,
    blocks_written: u64,
}

impl RunFileWriter {
    /// Creates `path` (which must not exist) through `storage`.
    pub fn create(storage: &Storage, path: &Path, opts: WriterOptions) -> Result<Self> {
        let file = storage.create(path, true).map_err(io(path))?;
        Ok(RunFileWriter {
            path: path.to_path_buf(),
            file,
            out: Vec::with_capacity(WRITE_CHUNK),
            opts,
            offset: 0,
            block: Vec::with_capacity(opts.block_bytes + 64),
            block_count: 0,
            block_fence: None,
            fences: Fences::new(),
            filter: FilterBuilder::new(opts.granularity, opts.bits_per_key),
            hashes: Vec::new(),
            entries: 0,
            tombstones: 0,
            min_seq: u64::MAX,
            max_seq: 0,
            min_key: None,
            max_key: Vec::new(),
            blocks_written: 0,
        })
    }

    /// Bytes written so far (approximately the file size).
    pub fn bytes(&self) -> u64 {
        self.offset + self.block.len() as u64
    }

    /// Entries added so far.
    pub fn entries(&self) -> u64 {
        self.entries
    }

    /// Appends an entry; keys must be strictly increasing.
    pub fn add(&mut self, key: &[u8], seq: u64, value: Option<&[u8]>) -> Result<()> {
        debug_assert!(self.min_key.is_none() || key > self.max_key.as_slice());
        if self.block_fence.is_none() {
            // the block's fence: its first key, or for a later block the smallest key above the previous
            // block's last key, so that a seek between the two blocks reads only the later one
            self.block_fence = Some(match self.min_key {
                None => key.to_vec(),
                Some(_) => fence_after(&self.max_key),
            });
            self.block.extend_from_slice(&0u32.to_le_bytes());
        }
        self.block.push(value.is_some() as u8);
        self.block.extend_from_slice(&seq.to_le_bytes());
        self.block
            .extend_from_slice(&(key.len() as u32).to_le_bytes());
        self.block
            .extend_from_slice(&(value.map_or(0, |v| v.len()) as u32).to_le_bytes());
        self.block.extend_from_slice(key);
        if let Some(v) = value {
            self.block.extend_from_slice(v);
        }
        let n = u32::from_le_bytes(self.block[0..4].try_into().unwrap_or([0; 4])) + 1;
        self.block[0..4].copy_from_slice(&n.to_le_bytes());
        self.entries += 1;
        self.tombstones += value.is_none() as u64;
        self.min_seq = self.min_seq.min(seq);
        self.max_seq = self.max_seq.max(seq);
        if self.min_key.is_none() {
            self.min_key = Some(key.to_vec());
        }
        self.max_key = key.to_vec();
        if let Some(f) = &mut self.filter {
            f.add(stable_hash(key), self.block_count);
        }
        if self.opts.index == IndexKind::Hash {
            self.hashes.push((stable_hash(key), self.block_count));
        }
        if self.block.len() >= self.opts.block_bytes {
            self.flush_block()?;
        }
        Ok(())
    }

    /// Appends `payload` and its checksum. Small sections gather in `out`, which never grows past
    /// [`WRITE_CHUNK`]: it is written out before a section would overflow it (extending past its capacity would
    /// double it, and every writer alive at once, a flush's and each subcompaction's, would hold twice the
    /// memory the design's allowance counts). A section larger than the chunk is written straight through.
    pub(super) fn write_section(&mut self, payload: &[u8]) -> Result<(u64, u32)> {
        let off = self.offset;
        let checksum = crc(payload).to_le_bytes();
        let len = payload.len() + checksum.len();
        if self.out.len() + len > WRITE_CHUNK {
            self.write_out()?;
        }
        if len > WRITE_CHUNK {
            self.file.append(payload).map_err(io(&self.path))?;
            self.file.append(&checksum).map_err(io(&self.path))?;
        } else {
            self.out.extend_from_slice(payload);
            self.out.extend_from_slice(&checksum);
        }
        self.offset += len as u64;
        debug_assert!(self.out.capacity() <= WRITE_CHUNK, "the write chunk grew");
        Ok((off, len as u32))
    }

    /// Hands the gathered sections to the file.
    fn write_out(&mut self) -> Result<()> {
        if !self.out.is_empty() {
            self.file.append(&self.out).map_err(io(&self.path))?;
            self.out.clear();
        }
        Ok(())
    }

    pub(super) fn flush_block(&mut self) -> Result<()> {
        let Some(first) = self.block_fence.take() else {
            return Ok(());
        };
        let payload = std::mem::take(&mut self.block);
        let (offset, len) = self.write_section(&payload)?;
        self.fences.push(
            first,
            BlockHandle {
                offset,
                len,
                block: self.block_count,
            },
        );
        self.block_count += 1;
        self.blocks_written += 1;
        self.block = payload;
        self.block.clear();
        Ok(())
    }

    /// Writes the index, filter, hash and meta sections and the footer, then fsyncs the file.
    pub fn finish(mut self) -> Result<FileMeta> {
        self.flush_block()?;
        // index blocks (on-disk fence pointers) and the top index over them
        let index_off = self.offset;
        let mut top = Fences::new();
        for (i, (first, payload)) in self
            .fences
            .split_into_blocks(self.opts.block_bytes)
            .into_iter()
            .enumerate()
        {
            let (off, len) = self.write_section(&payload)?;
            top.push(
                first,
                BlockHandle {
                    offset: off,
                    len,
                    block: i as u32,
                },
            );
            self.blocks_written += 1;
        }
        let index_len = self.offset - index_off;
        let mut enc = Vec::new();
        top.encode(&mut enc);
        let top_sec = self.write_section(&enc)?;
        let filter = self.filter.take().and_then(FilterBuilder::finish);
        let filter_sec = match filter {
            Some(f) => self.write_section(&f.encode())?,
            None => (self.offset, 0),
        };
        let hash_sec = if self.opts.index == IndexKind::Hash {
            let mut pairs = std::mem::take(&mut self.hashes);
            let mut enc = Vec::new();
            HashIndex::encode_pairs(&mut pairs, self.fences.handles(), &mut enc);
            drop(pairs);
            self.write_section(&enc)?
        } else {
            (self.offset, 0)
        };
        let min_key = self.min_key.clone().unwrap_or_default();
        let mut meta = Vec::new();
        meta.extend_from_slice(&self.entries.to_le_bytes());
        meta.extend_from_slice(&self.tombstones.to_le_bytes());
        meta.extend_from_slice(&(if self.entries == 0 { 0 } else { self.min_seq }).to_le_bytes());
        meta.extend_from_slice(&self.max_seq.to_le_bytes());
        meta.extend_from_slice(&self.block_count.to_le_bytes());
        meta.extend_from_slice(&(min_key.len() as u32).to_le_bytes());
        meta.extend_from_slice(&min_key);
        meta.extend_from_slice(&(self.max_key.len() as u32).to_le_bytes());
        meta.extend_from_slice(&self.max_key);
        let meta_sec = self.write_section(&meta)?;
        let mut footer = Vec::with_capacity(FOOTER_LEN);
        footer.extend_from_slice(MAGIC);
        footer.extend_from_slice(&FORMAT_VERSION.to_le_bytes());
        footer.extend_from_slice(&(self.opts.block_bytes as u32).to_le_bytes());
        footer.extend_from_slice(&index_off.to_le_bytes());
        footer.extend_from_slice(&index_len.to_le_bytes());
        for (off, len) in [top_sec, filter_sec, hash_sec, meta_sec] {
            footer.extend_from_slice(&off.to_le_bytes());
            footer.extend_from_slice(&len.to_le_bytes());
        }
        let c = crc(&footer);
        footer.extend_from_slice(&c.to_le_bytes());
        debug_assert_eq!(footer.len(), FOOTER_LEN);
        if self.out.len() + footer.len() > WRITE_CHUNK {
            self.write_out()?;
        }
        self.out.extend_from_slice(&footer);
        self.offset += footer.len() as u64;
        self.write_out()?;
        self.out = Vec::new();
        self.file.sync().map_err(io(&self.path))?;
        Ok(FileMeta {
            entries: self.entries,
            tombstones: self.tombstones,
            min_seq: if self.entries == 0 { 0 } else { self.min_seq },
            max_seq: self.max_seq,
            data_blocks: self.block_count,
            min_key,
            max_key: self.max_key,
            size: self.offset,
            blocks_written: self.blocks_written,
            fence_bytes: self.fences.memory_bytes() as u64,
        })
    }
}

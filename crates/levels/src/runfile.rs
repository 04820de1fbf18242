//! The run file: one immutable sorted file of checksummed blocks.
//!
//! Layout (every integer little-endian; every block and section ends with a CRC32C of its bytes):
//!
//! ```text
//! [data block]*        payload: [u32 n] n × ([u8 kind][u64 seq][u32 klen][u32 vlen][key][value]); kind 1 put, 0 delete
//! [index block]*       Fences::encode of up to block_bytes of data-block fences (the on-disk fence pointers)
//! [top index]          Fences::encode with one fence per index block (always kept in memory)
//! [filter section]     FileFilter::encode (absent when len = 0)
//! [hash section]       HashIndex::encode (LSH designs; absent when len = 0)
//! [meta section]       [u64 entries][u64 tombstones][u64 min_seq][u64 max_seq][u32 data_blocks][u32 klen][min key][u32 klen][max key]
//! [footer, 84 bytes]   magic "COSRUN01", u32 format version, u32 block bytes, u64 index off, u64 index len,
//!                      then (u64 off, u32 len) for top, filter, hash and meta, then u32 CRC of the footer
//! ```

use crate::error::{io, Error, Result};
use crate::stats::IoStats;
use cosine_design::FilterGranularity;
use cosine_fence_pointers::{
    fence_after, stable_hash, BlockHandle, BlockLocator, Fences, HashIndex, Locate, TopIndex,
};
use cosine_filters::{block_item, FileFilter, KeyFilter};
use parking_lot::RwLock;
use std::fs::File;
use std::io::{BufWriter, Write};
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};
use std::sync::Arc;

const MAGIC: &[u8; 8] = b"COSRUN01";
/// On-disk format version of run files.
pub const FORMAT_VERSION: u32 = 1;
const FOOTER_LEN: usize = 8 + 4 + 4 + 8 + 8 + 4 * (8 + 4) + 4;

/// One key-value version as stored: key, sequence number, value (`None` = tombstone).
pub type Entry = (Vec<u8>, u64, Option<Vec<u8>>);

/// How to build a file.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct WriterOptions {
    /// Target data-block size in bytes.
    pub block_bytes: usize,
    /// Filter bits per key (0 = no filter).
    pub bits_per_key: f64,
    /// Filter granularity.
    pub granularity: FilterGranularity,
    /// Build a hash index (LSH-like designs).
    pub hash_index: bool,
}

/// Facts about a finished file, kept in the manifest.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FileMeta {
    /// Entries (versions) stored.
    pub entries: u64,
    /// Tombstones among them.
    pub tombstones: u64,
    /// Smallest sequence number.
    pub min_seq: u64,
    /// Largest sequence number.
    pub max_seq: u64,
    /// Data blocks.
    pub data_blocks: u32,
    /// Smallest key.
    pub min_key: Vec<u8>,
    /// Largest key.
    pub max_key: Vec<u8>,
    /// File size in bytes.
    pub size: u64,
    /// Blocks written (data + index).
    pub blocks_written: u64,
    /// Memory the file's fences take when its level is hot (fence keys + 20 bytes each).
    pub fence_bytes: u64,
}

fn crc(bytes: &[u8]) -> u32 {
    crc32c::crc32c(bytes)
}

/// Writes a run file; `finish` makes it durable.
pub struct RunFileWriter {
    path: PathBuf,
    out: BufWriter<File>,
    opts: WriterOptions,
    offset: u64,
    block: Vec<u8>,
    block_count: u32,
    block_fence: Option<Vec<u8>>,
    fences: Fences,
    /// The file's keys as its filter's items (their stable hashes, mixed with their block numbers for
    /// per-block filters): 8 bytes a key until the filter is built.
    all_hashes: Vec<u64>,
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
    /// Creates `path` (which must not exist).
    pub fn create(path: &Path, opts: WriterOptions) -> Result<Self> {
        let file = File::options()
            .write(true)
            .create_new(true)
            .open(path)
            .map_err(io(path))?;
        Ok(RunFileWriter {
            path: path.to_path_buf(),
            out: BufWriter::with_capacity(1 << 16, file),
            opts,
            offset: 0,
            block: Vec::with_capacity(opts.block_bytes + 64),
            block_count: 0,
            block_fence: None,
            fences: Fences::new(),
            all_hashes: Vec::new(),
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
        if self.opts.bits_per_key > 0.0 {
            let h = stable_hash(key);
            self.all_hashes
                .push(if self.opts.granularity == FilterGranularity::Block {
                    block_item(h, self.block_count)
                } else {
                    h
                });
        }
        if self.opts.hash_index {
            self.hashes.push((stable_hash(key), self.block_count));
        }
        if self.block.len() >= self.opts.block_bytes {
            self.flush_block()?;
        }
        Ok(())
    }

    fn write_section(&mut self, payload: &[u8]) -> Result<(u64, u32)> {
        let off = self.offset;
        self.out.write_all(payload).map_err(io(&self.path))?;
        self.out
            .write_all(&crc(payload).to_le_bytes())
            .map_err(io(&self.path))?;
        let len = payload.len() as u64 + 4;
        self.offset += len;
        Ok((off, len as u32))
    }

    fn flush_block(&mut self) -> Result<()> {
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
        let filter = if self.opts.bits_per_key <= 0.0 {
            None
        } else {
            let items = std::mem::take(&mut self.all_hashes);
            if self.opts.granularity == FilterGranularity::Block {
                KeyFilter::build_per_block(&items, self.opts.bits_per_key)
            } else {
                KeyFilter::build_hashed(&items, self.opts.bits_per_key)
            }
            .map(FileFilter::Whole)
        };
        let filter_sec = match filter {
            Some(f) => self.write_section(&f.encode())?,
            None => (self.offset, 0),
        };
        let hash_sec = if self.opts.hash_index {
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
        self.out.write_all(&footer).map_err(io(&self.path))?;
        self.offset += footer.len() as u64;
        self.out.flush().map_err(io(&self.path))?;
        self.out.get_ref().sync_all().map_err(io(&self.path))?;
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

/// Where the sections of a file are.
#[derive(Clone, Copy, Debug)]
struct Footer {
    block_bytes: u32,
    top: (u64, u32),
    filter: (u64, u32),
    hash: (u64, u32),
    meta: (u64, u32),
}

/// What of a file is held in memory: filters and fences (or the hash index, for LSH designs) for hot runs,
/// the top index always.
struct Residency {
    fences: Option<Arc<Fences>>,
    filter: Option<Arc<FileFilter>>,
    /// The hash index of a hash-indexed file, in place of its fences.
    hash: Option<Arc<HashIndex>>,
}

/// An open, immutable run file.
pub struct RunFile {
    /// File id (unique in the database, increasing with age).
    pub id: u64,
    path: PathBuf,
    file: File,
    /// Facts about the file.
    pub meta: FileMeta,
    footer: Footer,
    top: TopIndex,
    resident: RwLock<Residency>,
}

fn corrupt(path: &Path, offset: u64, reason: impl Into<String>) -> Error {
    Error::Corruption {
        file: path.to_path_buf(),
        offset,
        reason: reason.into(),
    }
}

struct Cursor<'a> {
    buf: &'a [u8],
    pos: usize,
}

impl<'a> Cursor<'a> {
    fn take(&mut self, n: usize) -> Option<&'a [u8]> {
        let end = self.pos.checked_add(n)?;
        let s = self.buf.get(self.pos..end)?;
        self.pos = end;
        Some(s)
    }
    fn u32(&mut self) -> Option<u32> {
        Some(u32::from_le_bytes(self.take(4)?.try_into().ok()?))
    }
    fn u64(&mut self) -> Option<u64> {
        Some(u64::from_le_bytes(self.take(8)?.try_into().ok()?))
    }
}

/// Decodes a data block's payload into entries.
fn decode_block(payload: &[u8]) -> Option<Vec<Entry>> {
    let mut c = Cursor {
        buf: payload,
        pos: 0,
    };
    let n = c.u32()? as usize;
    if n > payload.len() / 17 + 1 {
        return None;
    }
    let mut out = Vec::with_capacity(n);
    for _ in 0..n {
        let kind = *c.take(1)?.first()?;
        let seq = c.u64()?;
        let klen = c.u32()? as usize;
        let vlen = c.u32()? as usize;
        let key = c.take(klen)?.to_vec();
        let value = match kind {
            1 => Some(c.take(vlen)?.to_vec()),
            0 if vlen == 0 => None,
            _ => return None,
        };
        if out.last().is_some_and(|(k, _, _): &Entry| *k >= key) {
            return None;
        }
        out.push((key, seq, value));
    }
    (c.pos == payload.len()).then_some(out)
}

impl RunFile {
    /// Opens a file, verifying its footer, meta section and top index; loads its hash index if it has one.
    pub fn open(path: &Path, id: u64) -> Result<Self> {
        let file = File::open(path).map_err(io(path))?;
        let size = file.metadata().map_err(io(path))?.len();
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
        let meta_bytes = read_section(&file, path, footer.meta)?;
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
        let top_bytes = read_section(&file, path, footer.top)?;
        let top = TopIndex(
            Fences::decode(&top_bytes).map_err(|e| corrupt(path, footer.top.0, e.to_string()))?,
        );
        // a hash index is verified here and its memory measured (what residency weighs against M_FP), then
        // dropped: it is loaded again only if the file is made hot, so opening a database or finishing a
        // compaction never holds more hash indexes than M_FP pays for
        let hash_bytes = if footer.hash.1 > 0 {
            Some(load_hash(&file, path, footer.hash)?.memory_bytes() as u64)
        } else {
            None
        };
        Ok(RunFile {
            id,
            path: path.to_path_buf(),
            file,
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
                fences: None,
                filter: None,
                hash: None,
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
    /// Loading reads the index blocks and the filter section once.
    pub fn set_residency(&self, hot: bool, with_filter: bool) -> Result<()> {
        if self.footer.hash.1 > 0 {
            // a hash-indexed file: its hash index in memory when hot; cold, lookups read its on-disk index
            let loaded = self.resident.read().hash.is_some();
            let hash = if hot && !loaded {
                Some(Arc::new(load_hash(
                    &self.file,
                    &self.path,
                    self.footer.hash,
                )?))
            } else {
                None
            };
            let mut r = self.resident.write();
            if !hot {
                r.hash = None;
            } else if hash.is_some() {
                r.hash = hash;
            }
            return Ok(());
        }
        let (has_fences, has_filter) = {
            let r = self.resident.read();
            (r.fences.is_some(), r.filter.is_some())
        };
        let fences = if hot && !has_fences {
            Some(Arc::new(self.load_fences()?))
        } else {
            None
        };
        let want_filter = hot && with_filter && self.footer.filter.1 > 0;
        let filter = if want_filter && !has_filter {
            let bytes = read_section(&self.file, &self.path, self.footer.filter)?;
            Some(Arc::new(FileFilter::decode(&bytes).map_err(|e| {
                corrupt(&self.path, self.footer.filter.0, e.to_string())
            })?))
        } else {
            None
        };
        let mut r = self.resident.write();
        if hot {
            if fences.is_some() {
                r.fences = fences;
            }
        } else {
            r.fences = None;
        }
        if want_filter {
            if filter.is_some() {
                r.filter = filter;
            }
        } else {
            r.filter = None;
        }
        Ok(())
    }

    fn load_fences(&self) -> Result<Fences> {
        // sized from the file's block count and its fence keys' length, so the fences' heap is what they count
        let key_bytes = self.meta.min_key.len().max(self.meta.max_key.len()) + 1;
        let blocks = self.meta.data_blocks as usize;
        let mut all = Fences::with_capacity(blocks, blocks * key_bytes);
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
        let fences = r.fences.as_ref().map_or(0, |f| f.memory_bytes())
            + self.top.memory_bytes()
            + r.hash.as_ref().map_or(0, |h| h.memory_bytes());
        (fences, r.filter.as_ref().map_or(0, |f| f.memory_bytes()))
    }

    /// True when the file has a filter loaded.
    pub fn has_filter(&self) -> bool {
        self.resident.read().filter.is_some()
    }

    fn read_index_block(&self, h: BlockHandle) -> Result<Fences> {
        let bytes = read_section(&self.file, &self.path, (h.offset, h.len))?;
        Fences::decode(&bytes).map_err(|e| corrupt(&self.path, h.offset, e.to_string()))
    }

    /// Reads and decodes one data block, verifying its checksum.
    pub fn read_block(&self, h: BlockHandle) -> Result<Vec<Entry>> {
        let bytes = read_section(&self.file, &self.path, (h.offset, h.len))?;
        decode_block(&bytes)
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
        let (fences, filter, hash) = {
            let r = self.resident.read();
            (r.fences.clone(), r.filter.clone(), r.hash.clone())
        };
        // a whole-file filter answers before the (possibly on-disk) index is consulted
        let whole_filter = filter.as_deref().is_some_and(FileFilter::is_whole_file);
        if whole_filter {
            if let Some(f) = &filter {
                IoStats::bump(&counters.filter_probes);
                if !f.may_contain(key, None) {
                    IoStats::bump(&counters.filter_negatives);
                    return Ok(None);
                }
            }
        }
        // a hash index names candidate blocks by a 32-bit tag: read them until one holds the key
        if let Some(h) = &hash {
            for handle in h.blocks(key) {
                IoStats::bump_read(&counters.block_reads);
                let block = self.read_block(handle)?;
                if let Ok(i) = block.binary_search_by(|e| e.0.as_slice().cmp(key)) {
                    let (_, seq, v) = &block[i];
                    return Ok(Some((*seq, v.clone())));
                }
            }
            return Ok(None);
        }
        // find the block: in-memory fences, or the on-disk index (one I/O)
        let located = if let Some(f) = &fences {
            f.locate(key)
        } else {
            match self.top.locate(key) {
                Locate::IndexBlock(ib) => {
                    IoStats::bump_read(&counters.index_reads);
                    self.read_index_block(ib)?.locate(key)
                }
                other => other,
            }
        };
        let handle = match located {
            Locate::Block(h) => h,
            _ => return Ok(None),
        };
        let filtered = if whole_filter {
            true
        } else if let Some(f) = &filter {
            IoStats::bump(&counters.filter_probes);
            if !f.may_contain(key, Some(handle.block as usize)) {
                IoStats::bump(&counters.filter_negatives);
                return Ok(None);
            }
            true
        } else {
            false
        };
        IoStats::bump_read(&counters.block_reads);
        let block = self.read_block(handle)?;
        match block.binary_search_by(|e| e.0.as_slice().cmp(key)) {
            Ok(i) => {
                let (_, seq, v) = &block[i];
                Ok(Some((*seq, v.clone())))
            }
            Err(_) => {
                if filtered {
                    IoStats::bump(&counters.false_positives);
                }
                Ok(None)
            }
        }
    }

    /// The in-memory fences if the file is hot.
    fn resident_fences(&self) -> Option<Arc<Fences>> {
        self.resident.read().fences.clone()
    }
}

/// Reads and decodes a file's hash index section.
fn load_hash(file: &File, path: &Path, sec: (u64, u32)) -> Result<HashIndex> {
    let bytes = read_section(file, path, sec)?;
    HashIndex::decode(&bytes).map_err(|e| corrupt(path, sec.0, e.to_string()))
}

fn read_section(file: &File, path: &Path, (off, len): (u64, u32)) -> Result<Vec<u8>> {
    if len < 4 {
        return Err(corrupt(path, off, "section shorter than its checksum"));
    }
    let mut buf = vec![0u8; len as usize];
    file.read_exact_at(&mut buf, off).map_err(|e| {
        if e.kind() == std::io::ErrorKind::UnexpectedEof {
            corrupt(path, off, "section beyond the end of the file")
        } else {
            Error::Io {
                path: path.to_path_buf(),
                source: e,
            }
        }
    })?;
    let n = buf.len() - 4;
    let stored = u32::from_le_bytes(buf[n..].try_into().unwrap_or([0; 4]));
    if crc(&buf[..n]) != stored {
        return Err(corrupt(path, off, "checksum mismatch"));
    }
    buf.truncate(n);
    Ok(buf)
}

/// How a file iterator finds its next data block: through in-memory fences (hot files) or by walking the
/// on-disk index blocks from the top index (cold files), one index block at a time.
enum Blocks {
    Resident {
        fences: Arc<Fences>,
        next: usize,
    },
    Cascade {
        next_index: usize,
        current: Option<(Fences, usize)>,
    },
}

/// Iterates a file's entries from the first key ≥ `start`, reading one block at a time.
pub struct FileIter {
    file: Arc<RunFile>,
    blocks: Blocks,
    block: std::vec::IntoIter<Entry>,
    start: Option<Vec<u8>>,
    stats: Option<(Arc<IoStats>, usize, bool)>,
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
        })
    }

    fn count(&self, index: bool) {
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
    fn next_handle(&mut self) -> Result<Option<BlockHandle>> {
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

    /// The next entry, or `Ok(None)` at the end.
    pub fn next_entry(&mut self) -> Result<Option<Entry>> {
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
            self.block = self.file.read_block(h)?.into_iter();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn opts(bits: f64, g: FilterGranularity, hash: bool) -> WriterOptions {
        WriterOptions {
            block_bytes: 256,
            bits_per_key: bits,
            granularity: g,
            hash_index: hash,
        }
    }

    fn build(dir: &Path, name: &str, o: WriterOptions, n: u32) -> Arc<RunFile> {
        let p = dir.join(name);
        let mut w = RunFileWriter::create(&p, o).unwrap();
        for i in 0..n {
            let k = format!("key{:06}", i * 2);
            let v = if i % 7 == 0 {
                None
            } else {
                Some(format!("value-{i}").into_bytes())
            };
            w.add(k.as_bytes(), i as u64 + 1, v.as_deref()).unwrap();
        }
        let meta = w.finish().unwrap();
        assert_eq!(meta.entries, n as u64);
        Arc::new(RunFile::open(&p, 1).unwrap())
    }

    #[test]
    fn every_shape_finds_every_key() {
        let dir = tempfile::tempdir().unwrap();
        let stats = IoStats::default();
        for (i, (o, hot)) in [
            (opts(10.0, FilterGranularity::File, false), true),
            (opts(10.0, FilterGranularity::Block, false), true),
            (opts(0.0, FilterGranularity::File, false), false),
            (opts(0.0, FilterGranularity::File, true), false),
        ]
        .into_iter()
        .enumerate()
        {
            let f = build(dir.path(), &format!("f{i}"), o, 500);
            f.set_residency(hot, true).unwrap();
            for j in 0..500u32 {
                let k = format!("key{:06}", j * 2);
                let got = f.get(k.as_bytes(), &stats, 1).unwrap().unwrap();
                assert_eq!(got.0, j as u64 + 1);
                assert_eq!(got.1.is_none(), j % 7 == 0);
                assert!(f
                    .get(format!("key{:06}", j * 2 + 1).as_bytes(), &stats, 1)
                    .unwrap()
                    .is_none());
            }
            let mut it = FileIter::new(f.clone(), Some(b"key000101"), None).unwrap();
            assert_eq!(it.next_entry().unwrap().unwrap().0, b"key000102".to_vec());
        }
        let s = stats.snapshot(1)[0];
        assert!(s.filter_negatives > 0 && s.index_reads > 0);
    }

    #[test]
    fn a_seek_between_blocks_reads_only_the_later_block() {
        let dir = tempfile::tempdir().unwrap();
        for hot in [true, false] {
            let f = build(
                dir.path(),
                &format!("s{hot}"),
                opts(0.0, FilterGranularity::File, false),
                500,
            );
            f.set_residency(hot, false).unwrap();
            // the fences the level's residency would charge are the fences loaded
            if hot {
                let (fences, _) = f.memory_bytes();
                assert_eq!(
                    f.meta.fence_bytes as usize,
                    fences - f.top.memory_bytes(),
                    "fence bytes"
                );
            }
            let stats = Arc::new(IoStats::default());
            for j in 0..499u32 {
                // every odd key lies in a gap, some of them between two blocks
                let start = format!("key{:06}", j * 2 + 1);
                let mut it = FileIter::new(
                    f.clone(),
                    Some(start.as_bytes()),
                    Some((stats.clone(), 1, false)),
                )
                .unwrap();
                let before = stats.snapshot(1)[0];
                assert_eq!(
                    it.next_entry().unwrap().unwrap().0,
                    format!("key{:06}", j * 2 + 2).into_bytes()
                );
                let after = stats.snapshot(1)[0];
                assert_eq!(
                    after.block_reads - before.block_reads,
                    1,
                    "{start} hot={hot}"
                );
                assert_eq!(after.index_reads - before.index_reads, u64::from(!hot));
            }
        }
    }

    #[test]
    fn cold_lookup_reads_an_index_block_and_a_data_block() {
        let dir = tempfile::tempdir().unwrap();
        let f = build(
            dir.path(),
            "cold",
            opts(0.0, FilterGranularity::File, false),
            2000,
        );
        let stats = IoStats::default();
        f.get(b"key001000", &stats, 3).unwrap().unwrap();
        let s = stats.snapshot(3)[2];
        assert_eq!((s.index_reads, s.block_reads), (1, 1));
        f.set_residency(true, false).unwrap();
        f.get(b"key001000", &stats, 3).unwrap().unwrap();
        let s = stats.snapshot(3)[2];
        assert_eq!((s.index_reads, s.block_reads), (1, 2));
    }

    #[test]
    fn every_flipped_byte_is_detected() {
        let dir = tempfile::tempdir().unwrap();
        let f = build(
            dir.path(),
            "orig",
            opts(10.0, FilterGranularity::File, false),
            120,
        );
        let bytes = std::fs::read(f.path()).unwrap();
        let stats = IoStats::default();
        for pos in (0..bytes.len()).step_by(7) {
            let mut b = bytes.clone();
            b[pos] ^= 0x5a;
            let p = dir.path().join("flipped");
            std::fs::write(&p, &b).unwrap();
            let res = RunFile::open(&p, 2).and_then(|file| {
                file.set_residency(true, true)?;
                for j in 0..120u32 {
                    let k = format!("key{:06}", j * 2);
                    match file.get(k.as_bytes(), &stats, 1)? {
                        Some((seq, v)) => {
                            assert_eq!(seq, j as u64 + 1, "wrong data at flipped byte {pos}");
                            assert_eq!(v.is_none(), j % 7 == 0, "wrong data at flipped byte {pos}");
                        }
                        None => {
                            // a flipped filter bit may only hide a key if the filter was rejected: never silently
                            panic!("key {k} lost with flipped byte {pos}");
                        }
                    }
                }
                Ok(())
            });
            assert!(
                matches!(res, Ok(()) | Err(Error::Corruption { .. })),
                "byte {pos}: {res:?}"
            );
        }
    }
}

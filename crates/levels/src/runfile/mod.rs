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

mod block;
mod iter;
mod locate;
#[cfg(test)]
mod readahead_tests;
mod reader;
#[cfg(test)]
mod tests;
mod writer;

pub use block::Block;
pub use iter::{expected_readahead, FileIter, Readahead, SCAN_READAHEAD_MAX, SCAN_READAHEAD_START};
pub use writer::RunFileWriter;

use crate::error::{io, Error, Result};
use crate::stats::IoStats;
use cosine_design::FilterGranularity;
use cosine_fence_pointers::{
    fence_after, stable_hash, BlockHandle, BlockLocator, Fences, HashIndex, IndexKind, Locate,
    TopIndex,
};
use cosine_filters::{FileFilter, FilterBuilder};
use cosine_storage::{ReadFile, Storage, WriteFile};
use parking_lot::RwLock;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// A sorted stream of entries whose every step can fail with an I/O or corruption error: the one iterator
/// shape of the read path and of compactions (a file, a run, a buffer page, a merge of any of them). A source
/// that cannot fail (a buffer) is one too, through [`crate::merge::Source::Lazy`].
pub trait EntryIter {
    /// The next entry in key order, `Ok(None)` at the end.
    fn next_entry(&mut self) -> Result<Option<Entry>>;
}

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
    /// The in-memory index the file is built for: [`IndexKind::Hash`] writes a hash-index section too
    /// (log-structured hash tables); every file has its fences on disk.
    pub index: IndexKind,
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

/// Where the sections of a file are.
#[derive(Clone, Copy, Debug)]
struct Footer {
    block_bytes: u32,
    top: (u64, u32),
    filter: (u64, u32),
    hash: (u64, u32),
    meta: (u64, u32),
}

/// What of a file is held in memory, the parts its residency picked: the locator (fences or the hash index
/// for hot runs, the on-disk index for cold ones) and the filter (hot runs with filter memory); the top index
/// always.
struct Residency {
    locator: locate::Locator,
    filter: Option<Arc<FileFilter>>,
}

/// An open, immutable run file.
pub struct RunFile {
    /// File id (unique in the database, increasing with age).
    pub id: u64,
    path: PathBuf,
    /// The handle lookups read through, advised random (no kernel readahead).
    file: Arc<dyn ReadFile>,
    /// Where the file lives, to open [`RunFile::sequential`] for a compaction.
    storage: cosine_storage::Storage,
    /// A second handle with the kernel's readahead, opened when a scan or a compaction first reads the file.
    sequential: std::sync::OnceLock<Arc<dyn ReadFile>>,
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

//! The write-ahead log: segments `NNNNNNNNNN.wal` of checksummed records.
//!
//! Record: `[u32 crc32c of the length][u32 payload length][u32 crc32c of the payload][payload]`, payload one
//! entry `[u8 kind (1 put, 0 delete)][u64 seq][u32 key length][key][u32 value length][value]`, or for a batch of
//! several `[u8 2][u32 count]` and `count` entries: a batch is one record, so a crash leaves all of it or none.
//! A sync mark, `[u8 3][u64 segment id][u64 its own offset][u64 durable offset]`, starts each group of records
//! appended together once an fsync of the segment has reached further than the last mark said: the offset up to
//! which the segment was then durable. It proves that only in its own segment at its own offset.
//!
//! Recovery ([`replay`]) replays segments in order. How a damaged last segment ends the log is the
//! [`WalRecovery`] mode's: by default at its first damage unless a later mark proves the damaged bytes were
//! durable, which is corruption; damage in any other segment is corruption in every mode (a segment is fsynced
//! whole before the next one starts).

use crate::error::{io, Result};
use crate::storage::{Storage, WriteFile};
use std::path::{Path, PathBuf};
use std::sync::Arc;

mod replay;

pub use replay::{replay, Record, WalRecovery};

/// When the log is made durable. In every mode each acknowledged write has been handed to the operating
/// system (one `write` per write or per group) before the call returns, so killing the process loses nothing
/// that was acknowledged; the modes differ in what a machine crash or power loss may lose.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum SyncMode {
    /// fsync before every write returns; a write is visible to readers only once it is durable.
    Always,
    /// Group commit: a write returns, and becomes visible to readers, after an fsync that covers it; concurrent
    /// writers share fsyncs.
    #[default]
    Batch,
    /// Never fsync on writes: the OS decides when, so a machine crash may lose recent acknowledged writes (a
    /// process crash does not).
    Never,
}

impl SyncMode {
    /// The name a command line and a report spell the mode with: "always", "batch" or "never".
    pub const fn name(self) -> &'static str {
        match self {
            SyncMode::Always => "always",
            SyncMode::Batch => "batch",
            SyncMode::Never => "never",
        }
    }

    /// The mode [`SyncMode::name`] spells `name`, if any.
    pub fn from_name(name: &str) -> Option<SyncMode> {
        [SyncMode::Always, SyncMode::Batch, SyncMode::Never]
            .into_iter()
            .find(|m| m.name() == name)
    }
}

/// The path of segment `id`.
pub fn segment_path(dir: &Path, id: u64) -> PathBuf {
    dir.join(format!("{id:010}.wal"))
}

/// Appends records to the current segment.
pub struct WalWriter {
    path: PathBuf,
    file: Arc<dyn WriteFile>,
    /// Segment id.
    pub id: u64,
    /// Log position: bytes appended over the engine's lifetime (for group commit).
    pub lsn: u64,
    /// The segment's length when this writer opened it (all of it durable: a new segment's 0, or a replayed one
    /// fsynced by the opening).
    start: u64,
    /// The log position at which this writer opened the segment.
    base: u64,
    /// The durable offset the last sync mark carried (0: none written yet).
    marked: u64,
}

/// Encodes one record of a single put (`kind_put`) or delete.
pub fn encode(kind_put: bool, seq: u64, key: &[u8], value: &[u8], out: &mut Vec<u8>) {
    let start = out.len();
    out.extend_from_slice(&[0; HEADER]);
    encode_entry(kind_put, seq, key, value, out);
    seal(start, out);
}

/// Encodes a write batch as one record (one entry's record for a batch of one): entry `i` gets sequence
/// number `first + i`. A value of `None` is a delete.
pub fn encode_batch(first: u64, batch: &[(&[u8], Option<&[u8]>)], out: &mut Vec<u8>) {
    if let [(key, value)] = batch {
        return encode(value.is_some(), first, key, value.unwrap_or(&[]), out);
    }
    let start = out.len();
    out.extend_from_slice(&[0; HEADER]);
    out.push(BATCH);
    out.extend_from_slice(&(batch.len() as u32).to_le_bytes());
    for (i, (key, value)) in batch.iter().enumerate() {
        encode_entry(
            value.is_some(),
            first + i as u64,
            key,
            value.unwrap_or(&[]),
            out,
        );
    }
    seal(start, out);
}

fn encode_entry(kind_put: bool, seq: u64, key: &[u8], value: &[u8], out: &mut Vec<u8>) {
    out.push(kind_put as u8);
    out.extend_from_slice(&seq.to_le_bytes());
    out.extend_from_slice(&(key.len() as u32).to_le_bytes());
    out.extend_from_slice(key);
    out.extend_from_slice(&(value.len() as u32).to_le_bytes());
    out.extend_from_slice(value);
}

/// Fills in the header of the record that starts at `start`.
fn seal(start: usize, out: &mut [u8]) {
    let len = (out.len() - start - HEADER) as u32;
    let payload_crc = crc32c::crc32c(&out[start + HEADER..]);
    out[start + 4..start + 8].copy_from_slice(&len.to_le_bytes());
    out[start + 8..start + 12].copy_from_slice(&payload_crc.to_le_bytes());
    let header_crc = crc32c::crc32c(&len.to_le_bytes());
    out[start..start + 4].copy_from_slice(&header_crc.to_le_bytes());
}

/// The kind byte of a batch record.
const BATCH: u8 = 2;

/// Bytes of a batch record besides its entries: the header, the kind byte and the count.
pub const BATCH_OVERHEAD: u64 = HEADER as u64 + 5;

/// Bytes one entry takes in a log record.
pub fn entry_bytes(key: &[u8], value: Option<&[u8]>) -> u64 {
    (1 + 8 + 4 + key.len() + 4 + value.map_or(0, <[u8]>::len)) as u64
}

/// Bytes of a record header.
const HEADER: usize = 12;

/// The kind byte of a sync mark.
const MARK: u8 = 3;

/// Bytes of a sync mark record: the header, the kind byte, the segment's id, the mark's own offset and the
/// durable offset.
pub const MARK_BYTES: usize = HEADER + 25;

/// Encodes a sync mark of segment `segment` that lies at offset `at` in it: the segment was durable up to
/// `durable` bytes when the records after it were appended. The segment and the offset make a mark prove
/// nothing anywhere else: in a stale block of another segment, or copied into a value.
pub fn encode_mark(segment: u64, at: u64, durable: u64, out: &mut Vec<u8>) {
    let start = out.len();
    out.extend_from_slice(&[0; HEADER]);
    out.push(MARK);
    for n in [segment, at, durable] {
        out.extend_from_slice(&n.to_le_bytes());
    }
    seal(start, out);
}

/// The unit a disk writes atomically: a power loss leaves a file's unwritten tail zero from such a boundary.
const SECTOR: usize = 512;

impl WalWriter {
    /// Creates segment `id` through `storage` (and fsyncs the directory so the file survives a crash).
    /// An existing segment is appended to: its bytes must be durable already (the opening fsyncs every
    /// segment it replayed).
    pub fn create(storage: &Storage, dir: &Path, id: u64, lsn: u64) -> Result<Self> {
        let path = segment_path(dir, id);
        let file = storage.open_append(&path).map_err(io(&path))?;
        storage.sync_dir(dir).map_err(io(dir))?;
        let start = file.len().map_err(io(&path))?;
        Ok(WalWriter {
            path,
            file,
            id,
            lsn,
            start,
            base: lsn,
            marked: 0,
        })
    }

    /// Adds a sync mark to `out` (the records about to be appended) when the log is durable further into
    /// this segment than the last mark said: `synced_lsn` is the log position every completed fsync covers.
    pub fn mark(&mut self, synced_lsn: u64, out: &mut Vec<u8>) {
        let durable = self.start + synced_lsn.saturating_sub(self.base);
        if durable > self.marked {
            let at = self.start + (self.lsn - self.base) + out.len() as u64;
            encode_mark(self.id, at, durable, out);
            self.marked = durable;
        }
    }

    /// Appends encoded records with one `write`: once this returns, a process kill cannot lose them.
    pub fn append(&mut self, records: &[u8]) -> Result<()> {
        self.file.append(records).map_err(io(&self.path))?;
        self.lsn += records.len() as u64;
        Ok(())
    }

    /// fsyncs the segment.
    pub fn sync(&mut self) -> Result<()> {
        self.file.sync().map_err(io(&self.path))
    }

    /// A handle for fsyncing outside the writer lock (group commit).
    pub fn sync_handle(&self) -> (Arc<dyn WriteFile>, PathBuf) {
        (self.file.clone(), self.path.clone())
    }
}

#[cfg(test)]
mod tests;

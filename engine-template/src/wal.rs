//! The write-ahead log: segments `NNNNNNNNNN.wal` of checksummed records.
//!
//! Record: `[u32 crc32c of the rest][u32 payload length][payload]`, payload
//! `[u8 kind (1 put, 0 delete)][u64 seq][u32 key length][key][u32 value length][value]`.
//! Recovery replays segments in order and stops at the first torn record of the last segment, which it
//! truncates; a bad record in an earlier (fully synced) segment is corruption.

use crate::error::{io, Error, Result};
use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};

/// When the log is made durable.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum SyncMode {
    /// fsync before every write returns.
    Always,
    /// Group commit: a write returns after an fsync that covers it; concurrent writers share fsyncs.
    #[default]
    Batch,
    /// Never fsync on writes (the OS decides; a crash may lose recent acknowledged writes).
    Never,
}

/// The path of segment `id`.
pub fn segment_path(dir: &Path, id: u64) -> PathBuf {
    dir.join(format!("{id:010}.wal"))
}

/// Appends records to the current segment.
pub struct WalWriter {
    path: PathBuf,
    out: BufWriter<File>,
    /// Segment id.
    pub id: u64,
    /// Log position: bytes appended over the engine's lifetime (for group commit).
    pub lsn: u64,
}

/// Encodes one record.
pub fn encode(kind_put: bool, seq: u64, key: &[u8], value: &[u8], out: &mut Vec<u8>) {
    let start = out.len();
    out.extend_from_slice(&[0; 8]);
    out.push(kind_put as u8);
    out.extend_from_slice(&seq.to_le_bytes());
    out.extend_from_slice(&(key.len() as u32).to_le_bytes());
    out.extend_from_slice(key);
    out.extend_from_slice(&(value.len() as u32).to_le_bytes());
    out.extend_from_slice(value);
    let len = (out.len() - start - 8) as u32;
    out[start + 4..start + 8].copy_from_slice(&len.to_le_bytes());
    let c = crc32c::crc32c(&out[start + 4..]);
    out[start..start + 4].copy_from_slice(&c.to_le_bytes());
}

impl WalWriter {
    /// Creates segment `id` (and fsyncs the directory so the file survives a crash).
    pub fn create(dir: &Path, id: u64, lsn: u64) -> Result<Self> {
        let path = segment_path(dir, id);
        let file = File::options().create(true).append(true).open(&path).map_err(io(&path))?;
        sync_dir(dir)?;
        Ok(WalWriter { path, out: BufWriter::with_capacity(1 << 16, file), id, lsn })
    }

    /// Appends an encoded record (buffered; `flush` or `sync` to push it out).
    pub fn append(&mut self, record: &[u8]) -> Result<()> {
        self.out.write_all(record).map_err(io(&self.path))?;
        self.lsn += record.len() as u64;
        Ok(())
    }

    /// Hands the buffered bytes to the OS.
    pub fn flush(&mut self) -> Result<()> {
        self.out.flush().map_err(io(&self.path))
    }

    /// Flushes and fsyncs.
    pub fn sync(&mut self) -> Result<()> {
        self.flush()?;
        self.out.get_ref().sync_data().map_err(io(&self.path))
    }

    /// A handle for fsyncing outside the writer lock (group commit).
    pub fn sync_handle(&mut self) -> Result<(File, PathBuf)> {
        self.flush()?;
        Ok((self.out.get_ref().try_clone().map_err(io(&self.path))?, self.path.clone()))
    }
}

/// One replayed record.
pub struct Record {
    /// Sequence number.
    pub seq: u64,
    /// Key.
    pub key: Vec<u8>,
    /// Value, `None` for a delete.
    pub value: Option<Vec<u8>>,
}

/// Reads a segment's records. With `is_last`, a torn tail ends the log and the file is truncated to its last
/// whole record; otherwise a bad record is corruption.
pub fn replay(dir: &Path, id: u64, is_last: bool) -> Result<Vec<Record>> {
    let path = segment_path(dir, id);
    let bytes = std::fs::read(&path).map_err(io(&path))?;
    let mut out = Vec::new();
    let mut pos = 0usize;
    while pos < bytes.len() {
        match decode_at(&bytes, pos) {
            Some((rec, next)) => {
                out.push(rec);
                pos = next;
            }
            None => {
                if !is_last {
                    return Err(Error::Corruption { file: path, offset: pos as u64, reason: "bad log record".into() });
                }
                let f = File::options().write(true).open(&path).map_err(io(&path))?;
                f.set_len(pos as u64).map_err(io(&path))?;
                f.sync_all().map_err(io(&path))?;
                break;
            }
        }
    }
    Ok(out)
}

fn decode_at(b: &[u8], pos: usize) -> Option<(Record, usize)> {
    let crc = u32::from_le_bytes(b.get(pos..pos + 4)?.try_into().ok()?);
    let len = u32::from_le_bytes(b.get(pos + 4..pos + 8)?.try_into().ok()?) as usize;
    let body = b.get(pos + 8..pos + 8 + len)?;
    if crc32c::crc32c(b.get(pos + 4..pos + 8 + len)?) != crc {
        return None;
    }
    let kind = *body.first()?;
    let seq = u64::from_le_bytes(body.get(1..9)?.try_into().ok()?);
    let klen = u32::from_le_bytes(body.get(9..13)?.try_into().ok()?) as usize;
    let key = body.get(13..13 + klen)?.to_vec();
    let vstart = 13 + klen;
    let vlen = u32::from_le_bytes(body.get(vstart..vstart + 4)?.try_into().ok()?) as usize;
    let value = body.get(vstart + 4..vstart + 4 + vlen)?.to_vec();
    if vstart + 4 + vlen != body.len() || kind > 1 {
        return None;
    }
    Some((Record { seq, key, value: (kind == 1).then_some(value) }, pos + 8 + len))
}

/// fsyncs a directory so that created, renamed and removed entries are durable.
pub fn sync_dir(dir: &Path) -> Result<()> {
    File::open(dir).and_then(|d| d.sync_all()).map_err(io(dir))
}

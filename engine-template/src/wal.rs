//! The write-ahead log: segments `NNNNNNNNNN.wal` of checksummed records.
//!
//! Record: `[u32 crc32c of the length][u32 payload length][u32 crc32c of the payload][payload]`, payload
//! `[u8 kind (1 put, 0 delete)][u64 seq][u32 key length][key][u32 value length][value]`.
//!
//! Recovery replays segments in order. Only a torn tail of the last segment ends the log quietly (and is
//! truncated away): fewer bytes left than a header, a header whose record runs past the end of the file, or a
//! tail of zeros. Any other bad record, anywhere, is
//! reported as corruption, so that a damaged byte never silently drops the acknowledged writes behind it.

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
    /// A second handle on the segment for fsyncs outside the writer lock.
    sync_file: std::sync::Arc<File>,
    /// Segment id.
    pub id: u64,
    /// Log position: bytes appended over the engine's lifetime (for group commit).
    pub lsn: u64,
}

/// Encodes one record.
pub fn encode(kind_put: bool, seq: u64, key: &[u8], value: &[u8], out: &mut Vec<u8>) {
    let start = out.len();
    out.extend_from_slice(&[0; HEADER]);
    out.push(kind_put as u8);
    out.extend_from_slice(&seq.to_le_bytes());
    out.extend_from_slice(&(key.len() as u32).to_le_bytes());
    out.extend_from_slice(key);
    out.extend_from_slice(&(value.len() as u32).to_le_bytes());
    out.extend_from_slice(value);
    let len = (out.len() - start - HEADER) as u32;
    let payload_crc = crc32c::crc32c(&out[start + HEADER..]);
    out[start + 4..start + 8].copy_from_slice(&len.to_le_bytes());
    out[start + 8..start + 12].copy_from_slice(&payload_crc.to_le_bytes());
    let header_crc = crc32c::crc32c(&len.to_le_bytes());
    out[start..start + 4].copy_from_slice(&header_crc.to_le_bytes());
}

/// Bytes of a record header.
const HEADER: usize = 12;

impl WalWriter {
    /// Creates segment `id` (and fsyncs the directory so the file survives a crash).
    pub fn create(dir: &Path, id: u64, lsn: u64) -> Result<Self> {
        let path = segment_path(dir, id);
        let file = File::options()
            .create(true)
            .append(true)
            .open(&path)
            .map_err(io(&path))?;
        let sync_file = std::sync::Arc::new(file.try_clone().map_err(io(&path))?);
        sync_dir(dir)?;
        Ok(WalWriter {
            path,
            out: BufWriter::with_capacity(1 << 16, file),
            sync_file,
            id,
            lsn,
        })
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
    pub fn sync_handle(&mut self) -> Result<(std::sync::Arc<File>, PathBuf)> {
        self.flush()?;
        Ok((self.sync_file.clone(), self.path.clone()))
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
            Decoded::Record(rec, next) => {
                out.push(rec);
                pos = next;
            }
            Decoded::Torn if is_last => {
                let f = File::options().write(true).open(&path).map_err(io(&path))?;
                f.set_len(pos as u64).map_err(io(&path))?;
                f.sync_all().map_err(io(&path))?;
                break;
            }
            Decoded::Torn | Decoded::Corrupt => {
                return Err(Error::Corruption {
                    file: path,
                    offset: pos as u64,
                    reason: "bad log record".into(),
                });
            }
        }
    }
    Ok(out)
}

enum Decoded {
    Record(Record, usize),
    /// The end of the log as a crash can leave it.
    Torn,
    /// Damage that no crash produces.
    Corrupt,
}

fn decode_at(b: &[u8], pos: usize) -> Decoded {
    let rest = &b[pos..];
    if rest.len() < HEADER || rest.iter().all(|x| *x == 0) {
        return Decoded::Torn;
    }
    let word = |i: usize| u32::from_le_bytes([rest[i], rest[i + 1], rest[i + 2], rest[i + 3]]);
    let (header_crc, len, payload_crc) = (word(0), word(4) as usize, word(8));
    if crc32c::crc32c(&rest[4..8]) != header_crc {
        return Decoded::Corrupt;
    }
    let Some(body) = rest.get(HEADER..HEADER + len) else {
        return Decoded::Torn;
    };
    let end = pos + HEADER + len;
    debug_assert!(end <= b.len());
    if crc32c::crc32c(body) != payload_crc {
        // the whole record is there but damaged: no crash leaves that (a torn append is short)
        return Decoded::Corrupt;
    }
    match parse_payload(body) {
        Some(rec) => Decoded::Record(rec, end),
        None => Decoded::Corrupt,
    }
}

fn parse_payload(body: &[u8]) -> Option<Record> {
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
    Some(Record {
        seq,
        key,
        value: (kind == 1).then_some(value),
    })
}

/// fsyncs a directory so that created, renamed and removed entries are durable.
pub fn sync_dir(dir: &Path) -> Result<()> {
    File::open(dir).and_then(|d| d.sync_all()).map_err(io(dir))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write_log(dir: &Path, n: u64) -> Vec<u8> {
        let mut w = WalWriter::create(dir, 1, 0).unwrap();
        let mut buf = Vec::new();
        for i in 0..n {
            buf.clear();
            encode(
                i % 3 != 0,
                i,
                format!("k{i}").as_bytes(),
                b"value",
                &mut buf,
            );
            w.append(&buf).unwrap();
        }
        w.sync().unwrap();
        std::fs::read(segment_path(dir, 1)).unwrap()
    }

    #[test]
    fn replays_every_record() {
        let dir = tempfile::tempdir().unwrap();
        write_log(dir.path(), 10);
        let recs = replay(dir.path(), 1, true).unwrap();
        assert_eq!(recs.len(), 10);
        assert_eq!(recs[3].value, None);
        assert_eq!(recs[4].value.as_deref(), Some(&b"value"[..]));
    }

    #[test]
    fn torn_tail_is_truncated_and_damage_is_reported() {
        let dir = tempfile::tempdir().unwrap();
        let bytes = write_log(dir.path(), 10);
        // a torn append: the last record cut short
        std::fs::write(segment_path(dir.path(), 1), &bytes[..bytes.len() - 3]).unwrap();
        assert_eq!(replay(dir.path(), 1, true).unwrap().len(), 9);
        let mut nine = Vec::new();
        for i in 0..9u64 {
            encode(
                i % 3 != 0,
                i,
                format!("k{i}").as_bytes(),
                b"value",
                &mut nine,
            );
        }
        assert_eq!(
            std::fs::metadata(segment_path(dir.path(), 1))
                .unwrap()
                .len() as usize,
            nine.len()
        );
        // a flipped byte in the middle is corruption, not the end of the log
        let mut bad = bytes.clone();
        bad[bytes.len() / 2] ^= 1;
        std::fs::write(segment_path(dir.path(), 1), &bad).unwrap();
        assert!(matches!(
            replay(dir.path(), 1, true),
            Err(Error::Corruption { .. })
        ));
        // and so is a flipped byte in the last record
        let mut bad = bytes.clone();
        let last = bad.len() - 2;
        bad[last] ^= 1;
        std::fs::write(segment_path(dir.path(), 1), &bad).unwrap();
        assert!(matches!(
            replay(dir.path(), 1, true),
            Err(Error::Corruption { .. })
        ));
    }
}

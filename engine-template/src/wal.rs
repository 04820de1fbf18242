//! The write-ahead log: segments `NNNNNNNNNN.wal` of checksummed records.
//!
//! Record: `[u32 crc32c of the length][u32 payload length][u32 crc32c of the payload][payload]`, payload one
//! entry `[u8 kind (1 put, 0 delete)][u64 seq][u32 key length][key][u32 value length][value]`, or for a batch of
//! several `[u8 2][u32 count]` and `count` entries: a batch is one record, so a crash leaves all of it or none.
//!
//! Recovery replays segments in order. Only a torn tail of the last segment ends the log quietly (and is
//! truncated away): fewer bytes left than a header, a header whose record runs past the end of the file, or a
//! tail of zeros. Any other bad record, anywhere, is
//! reported as corruption, so that a damaged byte never silently drops the acknowledged writes behind it.
//! The zero-tail rule cannot tell a power loss from a medium that zeroed the last sectors of a record that was
//! fsynced and acknowledged: such a last record is taken for a torn write and dropped.

use crate::error::{io, Error, Result};
use crate::storage::{Storage, WriteFile};
use std::path::{Path, PathBuf};
use std::sync::Arc;

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

/// The unit a disk writes atomically: a power loss leaves a file's unwritten tail zero from such a boundary.
const SECTOR: usize = 512;

impl WalWriter {
    /// Creates segment `id` through `storage` (and fsyncs the directory so the file survives a crash).
    pub fn create(storage: &Storage, dir: &Path, id: u64, lsn: u64) -> Result<Self> {
        let path = segment_path(dir, id);
        let file = storage.open_append(&path).map_err(io(&path))?;
        storage.sync_dir(dir).map_err(io(dir))?;
        Ok(WalWriter {
            path,
            file,
            id,
            lsn,
        })
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
///
/// A torn tail is what a crash leaves at the end of the last segment: fewer bytes than a header, a record that
/// runs past the end of the file, or a damaged last record whose bytes are zeros from a sector boundary inside
/// it to the end of the file (the file grew but its last sectors never reached the disk, as a power loss can
/// leave it). Any other damaged record is corruption wherever it lies.
pub fn replay(storage: &Storage, dir: &Path, id: u64, is_last: bool) -> Result<Vec<Record>> {
    let path = segment_path(dir, id);
    let bytes = storage.read(&path).map_err(io(&path))?;
    // the first sector boundary from which the file holds only zeros (bytes before it may be zero too: the
    // high bytes of a sequence number or a length)
    let zeros_from = bytes
        .iter()
        .rposition(|b| *b != 0)
        .map_or(0, |i| (i + 1).div_ceil(SECTOR) * SECTOR);
    let mut out = Vec::new();
    let mut pos = 0usize;
    while pos < bytes.len() {
        let decoded = match decode_at(&bytes, pos) {
            // damage where the zero tail reaches from a sector boundary inside this record to the end: torn
            Decoded::Corrupt { end } if zeros_from > pos && zeros_from < end => Decoded::Torn,
            // a whole record followed only by zeros is whole; damage before the zeros is corruption
            d => d,
        };
        match decoded {
            Decoded::Records(recs, next) => {
                out.extend(recs);
                pos = next;
            }
            Decoded::Torn if is_last => {
                let f = storage.open_append(&path).map_err(io(&path))?;
                f.set_len(pos as u64).map_err(io(&path))?;
                f.sync().map_err(io(&path))?;
                break;
            }
            Decoded::Torn | Decoded::Corrupt { .. } => {
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
    /// A record's entries (several for a batch) and where the next record starts.
    Records(Vec<Record>, usize),
    /// The end of the log as a crash can leave it.
    Torn,
    /// A record that fails its checks; `end` is where it would end by its header (the header's end when the
    /// header itself is bad). Corruption unless zeros follow from inside it to the end of the file.
    Corrupt { end: usize },
}

fn decode_at(b: &[u8], pos: usize) -> Decoded {
    let rest = &b[pos..];
    if rest.len() < HEADER || rest.iter().all(|x| *x == 0) {
        return Decoded::Torn;
    }
    let word = |i: usize| u32::from_le_bytes([rest[i], rest[i + 1], rest[i + 2], rest[i + 3]]);
    let (header_crc, len, payload_crc) = (word(0), word(4) as usize, word(8));
    if crc32c::crc32c(&rest[4..8]) != header_crc {
        return Decoded::Corrupt { end: pos + HEADER };
    }
    let Some(body) = rest.get(HEADER..HEADER + len) else {
        return Decoded::Torn;
    };
    let end = pos + HEADER + len;
    debug_assert!(end <= b.len());
    if crc32c::crc32c(body) != payload_crc {
        // the whole record is there but damaged: only a zero-filled tail comes from a crash
        return Decoded::Corrupt { end };
    }
    match parse_payload(body) {
        Some(recs) => Decoded::Records(recs, end),
        None => Decoded::Corrupt { end },
    }
}

fn parse_payload(body: &[u8]) -> Option<Vec<Record>> {
    if *body.first()? != BATCH {
        let (rec, used) = parse_entry(body)?;
        return (used == body.len()).then(|| vec![rec]);
    }
    let count = u32::from_le_bytes(body.get(1..5)?.try_into().ok()?) as usize;
    let mut pos = 5;
    let mut out = Vec::with_capacity(count.min(body.len() / 17));
    for _ in 0..count {
        let (rec, used) = parse_entry(body.get(pos..)?)?;
        out.push(rec);
        pos += used;
    }
    (pos == body.len()).then_some(out)
}

/// One entry at the start of `body` and the bytes it took.
fn parse_entry(body: &[u8]) -> Option<(Record, usize)> {
    let kind = *body.first()?;
    let seq = u64::from_le_bytes(body.get(1..9)?.try_into().ok()?);
    let klen = u32::from_le_bytes(body.get(9..13)?.try_into().ok()?) as usize;
    let key = body.get(13..13 + klen)?.to_vec();
    let vstart = 13 + klen;
    let vlen = u32::from_le_bytes(body.get(vstart..vstart + 4)?.try_into().ok()?) as usize;
    let value = body.get(vstart + 4..vstart + 4 + vlen)?.to_vec();
    if kind > 1 {
        return None;
    }
    Some((
        Record {
            seq,
            key,
            value: (kind == 1).then_some(value),
        },
        vstart + 4 + vlen,
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_put_s_record_is_as_long_as_the_cost_model_prices_it() {
        for (k, v) in [(16usize, 1008usize), (8, 0), (100, 4096)] {
            let mut buf = Vec::new();
            encode(true, 7, &vec![1; k], &vec![2; v], &mut buf);
            assert_eq!(buf.len(), cosine_design::shape::log_record_bytes(k, v));
            assert_eq!(
                entry_bytes(&vec![1; k], Some(&vec![2; v])) as usize + HEADER,
                buf.len()
            );
        }
    }

    #[test]
    fn a_sync_mode_is_found_again_by_its_name() {
        for m in [SyncMode::Always, SyncMode::Batch, SyncMode::Never] {
            assert_eq!(SyncMode::from_name(m.name()), Some(m));
        }
        assert_eq!(SyncMode::from_name("sometimes"), None);
    }

    fn write_log(dir: &Path, n: u64) -> Vec<u8> {
        let mut w = WalWriter::create(&Storage::default(), dir, 1, 0).unwrap();
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
        let recs = replay(&Storage::default(), dir.path(), 1, true).unwrap();
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
        assert_eq!(
            replay(&Storage::default(), dir.path(), 1, true)
                .unwrap()
                .len(),
            9
        );
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
            replay(&Storage::default(), dir.path(), 1, true),
            Err(Error::Corruption { .. })
        ));
        // and so is a flipped byte in the last record
        let mut bad = bytes.clone();
        let last = bad.len() - 2;
        bad[last] ^= 1;
        std::fs::write(segment_path(dir.path(), 1), &bad).unwrap();
        assert!(matches!(
            replay(&Storage::default(), dir.path(), 1, true),
            Err(Error::Corruption { .. })
        ));
    }

    #[test]
    fn a_zero_filled_tail_is_torn_but_zeros_elsewhere_are_corruption() {
        let dir = tempfile::tempdir().unwrap();
        let storage = Storage::default();
        let mut w = WalWriter::create(&storage, dir.path(), 1, 0).unwrap();
        let mut buf = Vec::new();
        for i in 0..4u64 {
            buf.clear();
            encode(true, i, format!("k{i}").as_bytes(), &[7u8; 700], &mut buf);
            w.append(&buf).unwrap();
        }
        w.sync().unwrap();
        let path = segment_path(dir.path(), 1);
        let bytes = std::fs::read(&path).unwrap();
        let record = bytes.len() / 4;
        // power loss: the file grew, but the last record's sectors from a boundary inside it are zeros
        let boundary = (3 * record / SECTOR + 1) * SECTOR;
        assert!(boundary > 3 * record && boundary < bytes.len());
        let mut torn = bytes.clone();
        torn[boundary..].fill(0);
        std::fs::write(&path, &torn).unwrap();
        assert_eq!(
            replay(&Storage::default(), dir.path(), 1, true)
                .unwrap()
                .len(),
            3
        );
        assert_eq!(std::fs::metadata(&path).unwrap().len() as usize, 3 * record);
        // the same zeros in a segment that is not the last: corruption
        std::fs::write(&path, &torn).unwrap();
        assert!(matches!(
            replay(&Storage::default(), dir.path(), 1, false),
            Err(Error::Corruption { .. })
        ));
        // zero bytes just before the boundary (a sequence number's high bytes, say) do not hide the lost sector
        let mut torn = bytes.clone();
        torn[boundary - 2..].fill(0);
        std::fs::write(&path, &torn).unwrap();
        assert_eq!(
            replay(&Storage::default(), dir.path(), 1, true)
                .unwrap()
                .len(),
            3
        );
        // zeros from past the last sector boundary inside the record are damage, not a lost sector
        let last_boundary = (bytes.len() - 1) / SECTOR * SECTOR;
        assert!(last_boundary > 3 * record);
        let mut bad = bytes.clone();
        bad[last_boundary + 3..].fill(0);
        std::fs::write(&path, &bad).unwrap();
        assert!(matches!(
            replay(&Storage::default(), dir.path(), 1, true),
            Err(Error::Corruption { .. })
        ));
        // zeros inside an earlier record, with whole records after them: corruption
        let mut bad = bytes.clone();
        bad[record + 20..record + 40].fill(0);
        std::fs::write(&path, &bad).unwrap();
        assert!(matches!(
            replay(&Storage::default(), dir.path(), 1, true),
            Err(Error::Corruption { .. })
        ));
    }

    #[test]
    fn a_batch_is_one_record_a_torn_tail_drops_whole() {
        let dir = tempfile::tempdir().unwrap();
        let storage = Storage::default();
        let mut w = WalWriter::create(&storage, dir.path(), 1, 0).unwrap();
        let mut rec = Vec::new();
        encode(true, 1, b"single", b"v", &mut rec);
        let whole = rec.len();
        let batch: Vec<(&[u8], Option<&[u8]>)> =
            vec![(b"a", Some(b"1")), (b"b", None), (b"c", Some(b"3"))];
        encode_batch(2, &batch, &mut rec);
        w.append(&rec).unwrap();
        w.sync().unwrap();
        let recs = replay(&storage, dir.path(), 1, true).unwrap();
        let seen: Vec<String> = recs
            .iter()
            .map(|r| format!("{} {:?} {:?}", r.seq, r.key, r.value))
            .collect();
        let want = |seq: u64, k: &[u8], v: Option<&[u8]>| {
            format!("{seq} {k:?} {:?}", v.map(<[u8]>::to_vec))
        };
        assert_eq!(
            seen,
            vec![
                want(1, b"single", Some(b"v")),
                want(2, b"a", Some(b"1")),
                want(3, b"b", None),
                want(4, b"c", Some(b"3"))
            ]
        );
        // cut anywhere inside the batch: none of it comes back
        let path = segment_path(dir.path(), 1);
        for cut in whole + 1..rec.len() {
            std::fs::write(&path, &rec[..cut]).unwrap();
            let recs = replay(&storage, dir.path(), 1, true).unwrap();
            assert_eq!(recs.len(), 1, "cut at {cut}");
        }
    }
}

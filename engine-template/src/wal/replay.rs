//! Reading a segment back: its records decoded, and where a damaged last segment ends the log, as the
//! [`WalRecovery`] mode says.

use super::{segment_path, BATCH, HEADER, MARK, SECTOR};
use crate::error::{io, Error, Result};
use crate::storage::Storage;
use std::path::Path;

/// How an opening treats a damaged log, after RocksDB's `WALRecoveryMode`. Damage in a segment that is not the
/// last is corruption in every mode: a segment is fsynced whole before the next one starts.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum WalRecovery {
    /// Any damage fails the opening, a torn tail too (`kAbsoluteConsistency`): for a store that would rather
    /// not open than open without a write it may have acknowledged. A crash in the middle of an append leaves a
    /// torn tail, so under `batch` and `never` an ordinary power loss can stop the opening here.
    AbsoluteConsistency,
    /// Only a torn tail ends the log (`kTolerateCorruptedTailRecords`): a record cut short, or zeros from a
    /// sector boundary inside the last record to the end of the file. Any other damage fails the opening.
    TolerateCorruptedTailRecords,
    /// The log ends at its first damage unless a later sync mark proves the damaged bytes durable, which is
    /// corruption (`kPointInTimeRecovery`, with that proof added). Damage no mark reaches past is what a power
    /// loss leaves of writes not yet fsynced (holes of zeros or garbage, torn sectors, a size grown past the
    /// data): the log is cut there, the records after it dropped (under `always` and `batch` none of them was
    /// acknowledged unless an fsync covered it, which would make the damage durable damage). What it cannot
    /// tell from a crash: damage to the newest durable records, after the last mark any later record carries.
    #[default]
    PointInTime,
}

impl WalRecovery {
    /// The name a command line spells the mode with: "absolute", "tail" or "point-in-time".
    pub const fn name(self) -> &'static str {
        match self {
            WalRecovery::AbsoluteConsistency => "absolute",
            WalRecovery::TolerateCorruptedTailRecords => "tail",
            WalRecovery::PointInTime => "point-in-time",
        }
    }

    /// The mode [`WalRecovery::name`] spells `name`, if any.
    pub fn from_name(name: &str) -> Option<WalRecovery> {
        [
            WalRecovery::AbsoluteConsistency,
            WalRecovery::TolerateCorruptedTailRecords,
            WalRecovery::PointInTime,
        ]
        .into_iter()
        .find(|m| m.name() == name)
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

/// Reads a segment's records (sync marks are not records). With `is_last`, damage may end the log as `mode`
/// allows, the file then truncated to its last whole record before it; otherwise any damage is corruption.
///
/// A torn tail ([`WalRecovery::TolerateCorruptedTailRecords`]) is what a crash leaves at the end of the last
/// segment: fewer bytes than a header, a record that runs past the end of the file, or a damaged last record
/// whose bytes are zeros from a sector boundary inside it to the end of the file (the file grew but its last
/// sectors never reached the disk, as a power loss can leave it).
pub fn replay(
    storage: &Storage,
    dir: &Path,
    id: u64,
    is_last: bool,
    mode: WalRecovery,
) -> Result<Vec<Record>> {
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
        let decoded = match decode_at(&bytes, pos, id) {
            // damage where the zero tail reaches from a sector boundary inside this record to the end: torn
            Decoded::Corrupt { end } if zeros_from > pos && zeros_from < end => Decoded::Torn,
            // a whole record followed only by zeros is whole; damage before the zeros is corruption
            d => d,
        };
        let ends_here = match (decoded, mode) {
            (Decoded::Records(recs, next), _) => {
                out.extend(recs);
                pos = next;
                continue;
            }
            (Decoded::Mark(next), _) => {
                pos = next;
                continue;
            }
            (_, _) if !is_last => Err("bad log record".to_string()),
            (_, WalRecovery::AbsoluteConsistency) => {
                Err("damaged log tail (absolute consistency recovery)".to_string())
            }
            (Decoded::Torn, WalRecovery::TolerateCorruptedTailRecords) => Ok(()),
            (Decoded::Corrupt { .. }, WalRecovery::TolerateCorruptedTailRecords) => {
                Err("bad log record".to_string())
            }
            (_, WalRecovery::PointInTime) => match durable_proven_after(&bytes, pos, id) {
                Some(durable) if durable > pos as u64 => Err(format!(
                    "bad log record in bytes a later sync mark says were durable (to offset {durable})"
                )),
                _ => Ok(()),
            },
        };
        match ends_here {
            Ok(()) => {
                let f = storage.open_append(&path).map_err(io(&path))?;
                f.set_len(pos as u64).map_err(io(&path))?;
                f.sync().map_err(io(&path))?;
                break;
            }
            Err(reason) => {
                return Err(Error::Corruption {
                    file: path,
                    offset: pos as u64,
                    reason,
                })
            }
        }
    }
    Ok(out)
}

/// The furthest durable offset any whole sync mark of segment `segment` after the damage at `from` carries
/// (None: no mark there). Every offset after it is tried, so a mark is found past garbage of any length; one
/// counts only where it says it lies and in the segment it names (its checksums let random bytes through about
/// once in 2^64 tries, and its segment and offset a mark in a stale block of another segment, or copied into a
/// value, hardly ever).
fn durable_proven_after(b: &[u8], from: usize, segment: u64) -> Option<u64> {
    let mut best = None;
    let mut pos = from + 1;
    while pos + HEADER <= b.len() {
        match checked_at(b, pos) {
            Some((body, next)) => {
                if let Some(durable) = own_mark(body, segment, pos) {
                    best = best.max(Some(durable));
                }
                pos = next;
            }
            None => pos += 1,
        }
    }
    best
}

/// The durable offset of the sync mark `body` if it is one of segment `segment` lying at `pos` (and claims no
/// more than the bytes before it).
fn own_mark(body: &[u8], segment: u64, pos: usize) -> Option<u64> {
    let (id, at, durable) = parse_mark(body)?;
    (id == segment && at == pos as u64 && durable <= at).then_some(durable)
}

enum Decoded {
    /// A record's entries (several for a batch) and where the next record starts.
    Records(Vec<Record>, usize),
    /// A sync mark (read by the proof's scan, [`durable_proven_after`]) and where the next record starts.
    Mark(usize),
    /// The end of the log as a crash can leave it.
    Torn,
    /// A record that fails its checks; `end` is where it would end by its header (the header's end when the
    /// header itself is bad). Corruption unless zeros follow from inside it to the end of the file.
    Corrupt { end: usize },
}

fn decode_at(b: &[u8], pos: usize, segment: u64) -> Decoded {
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
    // the first marks, of one day's development builds, held the durable offset alone: they prove nothing
    if matches!(body, [MARK, rest @ ..] if rest.len() == 8) {
        return Decoded::Mark(end);
    }
    // a mark of another segment or another place (a stale block) is not this segment's record
    if parse_mark(body).is_some() {
        return match own_mark(body, segment, pos) {
            Some(_) => Decoded::Mark(end),
            None => Decoded::Corrupt { end },
        };
    }
    match parse_payload(body) {
        Some(recs) => Decoded::Records(recs, end),
        None => Decoded::Corrupt { end },
    }
}

/// The payload of a record at `pos` whose header and payload checksums hold, and where the next one starts.
fn checked_at(b: &[u8], pos: usize) -> Option<(&[u8], usize)> {
    let rest = b.get(pos..)?;
    let word = |i: usize| u32::from_le_bytes([rest[i], rest[i + 1], rest[i + 2], rest[i + 3]]);
    if rest.len() < HEADER || crc32c::crc32c(&rest[4..8]) != word(0) {
        return None;
    }
    let body = rest.get(HEADER..HEADER + word(4) as usize)?;
    (crc32c::crc32c(body) == word(8)).then_some((body, pos + HEADER + body.len()))
}

/// A sync mark's segment, own offset and durable offset, if `body` is one.
fn parse_mark(body: &[u8]) -> Option<(u64, u64, u64)> {
    match body {
        [MARK, rest @ ..] if rest.len() == 24 => {
            let n = |i: usize| -> Option<u64> {
                Some(u64::from_le_bytes(rest.get(i..i + 8)?.try_into().ok()?))
            };
            Some((n(0)?, n(8)?, n(16)?))
        }
        _ => None,
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

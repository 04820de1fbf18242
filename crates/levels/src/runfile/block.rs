//! A data block read and checked, its entries reached in place: a point lookup binary-searches the keys
//! where they lie and copies only the value it returns, and a scan copies only the entries it yields (a scan
//! seeking into a run used to copy every entry of the block it lands in, each key and value an allocation,
//! and most of them were dropped again: those before its start key and those past its end).

use super::Entry;

/// Bytes of an entry's header: kind (1 put, 0 delete), sequence number, key length, value length.
const ENTRY_HEADER: usize = 1 + 8 + 4 + 4;

/// A data block's payload with where each entry's key and value lie, checked whole when it is parsed: every
/// entry's header and lengths within the payload, a tombstone without value bytes, keys strictly increasing,
/// nothing after the last entry. Every span it keeps lies within its bytes.
pub struct Block {
    bytes: Vec<u8>,
    spans: Vec<Span>,
}

/// Where one entry's key and value lie in the block's bytes.
#[derive(Clone, Copy)]
struct Span {
    seq: u64,
    key: (u32, u32),
    /// `None`: a tombstone.
    value: Option<(u32, u32)>,
}

/// One entry's fields, borrowed from the block.
struct Fields<'a> {
    seq: u64,
    key: &'a [u8],
    value: Option<&'a [u8]>,
    /// Where the key and value lie.
    span: Span,
}

fn range(at: usize, end: usize) -> Option<(u32, u32)> {
    Some((u32::try_from(at).ok()?, u32::try_from(end).ok()?))
}

fn u32_at(b: &[u8], at: usize) -> Option<u32> {
    Some(u32::from_le_bytes(b.get(at..at + 4)?.try_into().ok()?))
}

fn u64_at(b: &[u8], at: usize) -> Option<u64> {
    Some(u64::from_le_bytes(b.get(at..at + 8)?.try_into().ok()?))
}

/// The entry at `at` of `b` and where the next one starts, or `None` when it does not decode.
fn fields_at(b: &[u8], at: usize) -> Option<(Fields<'_>, usize)> {
    let kind = *b.get(at)?;
    let seq = u64_at(b, at + 1)?;
    let klen = u32_at(b, at + 9)? as usize;
    let vlen = u32_at(b, at + 13)? as usize;
    let key_at = at + ENTRY_HEADER;
    let value_at = key_at.checked_add(klen)?;
    let key = b.get(key_at..value_at)?;
    let (value, value_span, end) = match kind {
        1 => {
            let end = value_at.checked_add(vlen)?;
            (
                Some(b.get(value_at..end)?),
                Some(range(value_at, end)?),
                end,
            )
        }
        0 if vlen == 0 => (None, None, value_at),
        _ => return None,
    };
    let span = Span {
        seq,
        key: range(key_at, value_at)?,
        value: value_span,
    };
    Some((
        Fields {
            seq,
            key,
            value,
            span,
        },
        end,
    ))
}

impl Block {
    /// Parses and checks a payload (its checksum already verified); `None` when it does not decode.
    pub fn parse(bytes: Vec<u8>) -> Option<Block> {
        let n = u32_at(&bytes, 0)? as usize;
        if n > bytes.len() / ENTRY_HEADER + 1 {
            return None;
        }
        let mut spans = Vec::with_capacity(n);
        let mut at = 4;
        let mut prev: Option<&[u8]> = None;
        for _ in 0..n {
            let (f, end) = fields_at(&bytes, at)?;
            if prev.is_some_and(|p| p >= f.key) {
                return None;
            }
            prev = Some(f.key);
            spans.push(f.span);
            at = end;
        }
        if at != bytes.len() {
            return None;
        }
        Some(Block { bytes, spans })
    }

    fn slice(&self, (at, end): (u32, u32)) -> &[u8] {
        // every span was checked against the bytes when the block was parsed
        &self.bytes[at as usize..end as usize]
    }

    fn fields(&self, i: usize) -> Fields<'_> {
        let span = self.spans[i];
        Fields {
            seq: span.seq,
            key: self.slice(span.key),
            value: span.value.map(|v| self.slice(v)),
            span,
        }
    }

    /// Entries in the block.
    pub fn len(&self) -> usize {
        self.spans.len()
    }

    /// True when the block holds no entry.
    pub fn is_empty(&self) -> bool {
        self.spans.is_empty()
    }

    /// The key of entry `i`.
    pub fn key(&self, i: usize) -> &[u8] {
        self.slice(self.spans[i].key)
    }

    /// Entry `i`, copied out.
    pub fn entry(&self, i: usize) -> Entry {
        let f = self.fields(i);
        (f.key.to_vec(), f.seq, f.value.map(<[u8]>::to_vec))
    }

    /// The sequence number and value (`None`: a tombstone) of `key`, copied out, if the block holds it.
    pub fn get(&self, key: &[u8]) -> Option<(u64, Option<Vec<u8>>)> {
        let i = self.find(key).ok()?;
        let f = self.fields(i);
        Some((f.seq, f.value.map(<[u8]>::to_vec)))
    }

    /// Where `key` is (`Ok`), or where it would be (`Err`: the first entry above it).
    pub fn find(&self, key: &[u8]) -> Result<usize, usize> {
        let (mut lo, mut hi) = (0, self.len());
        while lo < hi {
            let mid = lo + (hi - lo) / 2;
            match self.key(mid).cmp(key) {
                std::cmp::Ordering::Less => lo = mid + 1,
                std::cmp::Ordering::Greater => hi = mid,
                std::cmp::Ordering::Equal => return Ok(mid),
            }
        }
        Err(lo)
    }

    /// The first entry whose key is at least `key`.
    pub fn lower_bound(&self, key: &[u8]) -> usize {
        self.find(key).unwrap_or_else(|i| i)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn encode(entries: &[Entry]) -> Vec<u8> {
        let mut b = (entries.len() as u32).to_le_bytes().to_vec();
        for (k, seq, v) in entries {
            b.push(v.is_some() as u8);
            b.extend_from_slice(&seq.to_le_bytes());
            b.extend_from_slice(&(k.len() as u32).to_le_bytes());
            b.extend_from_slice(&(v.as_ref().map_or(0, Vec::len) as u32).to_le_bytes());
            b.extend_from_slice(k);
            if let Some(v) = v {
                b.extend_from_slice(v);
            }
        }
        b
    }

    fn sample() -> Vec<Entry> {
        vec![
            (b"apple".to_vec(), 7, Some(b"red".to_vec())),
            (b"fig".to_vec(), 3, None),
            (b"kiwi".to_vec(), 9, Some(Vec::new())),
            (b"plum".to_vec(), 1, Some(vec![5u8; 300])),
        ]
    }

    #[test]
    fn entries_are_read_in_place_and_copied_out_whole() {
        let entries = sample();
        let b = Block::parse(encode(&entries)).expect("parses");
        assert_eq!(b.len(), 4);
        for (i, e) in entries.iter().enumerate() {
            assert_eq!(b.key(i), e.0.as_slice());
            assert_eq!(&b.entry(i), e);
            assert_eq!(b.get(&e.0), Some((e.1, e.2.clone())));
        }
        assert_eq!(b.get(b"banana"), None);
        assert_eq!(b.find(b"a"), Err(0));
        assert_eq!(b.find(b"fig"), Ok(1));
        assert_eq!(b.lower_bound(b"g"), 2);
        assert_eq!(b.lower_bound(b"zzz"), 4);
        let empty = Block::parse(0u32.to_le_bytes().to_vec()).expect("an empty block parses");
        assert!(empty.is_empty());
        assert_eq!(empty.lower_bound(b"a"), 0);
    }

    #[test]
    fn a_payload_that_does_not_decode_is_refused() {
        let good = encode(&sample());
        // cut anywhere, or grown
        for cut in 0..good.len() {
            assert!(Block::parse(good[..cut].to_vec()).is_none(), "cut at {cut}");
        }
        let mut grown = good.clone();
        grown.push(0);
        assert!(Block::parse(grown).is_none());
        // keys out of order, or repeated
        let mut swapped = sample();
        swapped.swap(0, 1);
        assert!(Block::parse(encode(&swapped)).is_none());
        let mut repeated = sample();
        repeated[1].0 = repeated[0].0.clone();
        assert!(Block::parse(encode(&repeated)).is_none());
        // a tombstone with value bytes, an unknown kind, a count beyond what the bytes can hold
        let mut bad_kind = good.clone();
        bad_kind[4] = 2;
        assert!(Block::parse(bad_kind).is_none());
        let tombstone = 4 + ENTRY_HEADER + 5 + 3;
        let mut valued_tombstone = good.clone();
        valued_tombstone[tombstone + 13] = 1;
        assert!(Block::parse(valued_tombstone).is_none());
        let mut count = good;
        count[0..4].copy_from_slice(&u32::MAX.to_le_bytes());
        assert!(Block::parse(count).is_none());
    }
}

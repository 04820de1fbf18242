//! How Redis types are stored in the engine: every user key's value starts with a type tag (`s` string,
//! `h` hash, `z` sorted-set marker); sorted-set members live under internal keys (prefix `\0\0cosine:`) that
//! keep them ordered by score, so ZRANGEBYSCORE is an ordered engine scan.

use std::collections::BTreeMap;

/// Prefix of internal keys (hidden from SCAN, DBSIZE, KEYS).
pub const INTERNAL: &[u8] = b"\0\0cosine:";

/// Type tags.
pub const STRING: u8 = b's';
/// Hash tag.
pub const HASH: u8 = b'h';
/// Sorted-set tag.
pub const ZSET: u8 = b'z';

/// A string value as stored.
pub fn string(v: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(v.len() + 1);
    out.push(STRING);
    out.extend_from_slice(v);
    out
}

/// A hash as stored: `h` then `[u32 n]` n × (`[u32 len][field][u32 len][value]`).
pub fn hash(h: &BTreeMap<Vec<u8>, Vec<u8>>) -> Vec<u8> {
    let mut out = vec![HASH];
    out.extend_from_slice(&(h.len() as u32).to_le_bytes());
    for (f, v) in h {
        out.extend_from_slice(&(f.len() as u32).to_le_bytes());
        out.extend_from_slice(f);
        out.extend_from_slice(&(v.len() as u32).to_le_bytes());
        out.extend_from_slice(v);
    }
    out
}

/// Decodes a stored hash (the bytes after the tag).
pub fn decode_hash(b: &[u8]) -> Option<BTreeMap<Vec<u8>, Vec<u8>>> {
    let mut pos = 0usize;
    let u32_at = |pos: &mut usize| -> Option<usize> {
        let v = u32::from_le_bytes(b.get(*pos..*pos + 4)?.try_into().ok()?) as usize;
        *pos += 4;
        Some(v)
    };
    let n = u32_at(&mut pos)?;
    let mut h = BTreeMap::new();
    for _ in 0..n {
        let fl = u32_at(&mut pos)?;
        let f = b.get(pos..pos + fl)?.to_vec();
        pos += fl;
        let vl = u32_at(&mut pos)?;
        let v = b.get(pos..pos + vl)?.to_vec();
        pos += vl;
        h.insert(f, v);
    }
    (pos == b.len()).then_some(h)
}

/// An f64 as 8 bytes whose byte order is the numeric order.
pub fn score_bytes(x: f64) -> [u8; 8] {
    // −0 and +0 are one score (Redis compares them equal)
    let x = if x == 0.0 { 0.0 } else { x };
    let bits = x.to_bits();
    let ordered = if bits >> 63 == 1 {
        !bits
    } else {
        bits ^ (1 << 63)
    };
    ordered.to_be_bytes()
}

/// The inverse of `score_bytes`.
pub fn score_of(b: &[u8]) -> Option<f64> {
    let o = u64::from_be_bytes(b.get(..8)?.try_into().ok()?);
    let bits = if o >> 63 == 1 { o ^ (1 << 63) } else { !o };
    Some(f64::from_bits(bits))
}

fn zprefix(kind: &[u8], key: &[u8]) -> Vec<u8> {
    let mut k = INTERNAL.to_vec();
    k.extend_from_slice(kind);
    k.extend_from_slice(&(key.len() as u32).to_be_bytes());
    k.extend_from_slice(key);
    k
}

/// Prefix of a sorted set's members ordered by score.
pub fn zscore_prefix(key: &[u8]) -> Vec<u8> {
    zprefix(b"zs:", key)
}

/// The internal key of one member in score order.
pub fn zscore_key(key: &[u8], score: f64, member: &[u8]) -> Vec<u8> {
    let mut k = zscore_prefix(key);
    k.extend_from_slice(&score_bytes(score));
    k.extend_from_slice(member);
    k
}

/// Prefix of a sorted set's member → score map.
pub fn zmember_prefix(key: &[u8]) -> Vec<u8> {
    zprefix(b"zm:", key)
}

/// The internal key holding a member's score.
pub fn zmember_key(key: &[u8], member: &[u8]) -> Vec<u8> {
    let mut k = zmember_prefix(key);
    k.extend_from_slice(member);
    k
}

/// The smallest key greater than every key with this prefix.
pub fn prefix_end(prefix: &[u8]) -> Vec<u8> {
    let mut e = prefix.to_vec();
    while let Some(last) = e.pop() {
        if last < 0xff {
            e.push(last + 1);
            return e;
        }
    }
    vec![0xff; prefix.len() + 1]
}

/// Redis glob matching for SCAN MATCH: `*`, `?`, `[...]` (with `^` and ranges) and `\\` escapes.
pub fn glob(pattern: &[u8], s: &[u8]) -> bool {
    fn m(p: &[u8], s: &[u8]) -> bool {
        match p.first() {
            None => s.is_empty(),
            Some(b'*') => (0..=s.len()).any(|i| m(&p[1..], &s[i..])),
            Some(b'?') => !s.is_empty() && m(&p[1..], &s[1..]),
            Some(b'[') => {
                let Some(close) = p.iter().skip(1).position(|c| *c == b']').map(|i| i + 1) else {
                    return !s.is_empty() && s[0] == b'[' && m(&p[1..], &s[1..]);
                };
                let Some(&c) = s.first() else { return false };
                let mut set = &p[1..close];
                let negate = set.first() == Some(&b'^');
                if negate {
                    set = &set[1..];
                }
                let mut hit = false;
                let mut i = 0;
                while i < set.len() {
                    if i + 2 < set.len() && set[i + 1] == b'-' {
                        hit |= set[i] <= c && c <= set[i + 2];
                        i += 3;
                    } else {
                        hit |= set[i] == c;
                        i += 1;
                    }
                }
                hit != negate && m(&p[close + 1..], &s[1..])
            }
            Some(b'\\') if p.len() > 1 => !s.is_empty() && s[0] == p[1] && m(&p[2..], &s[1..]),
            Some(&c) => !s.is_empty() && s[0] == c && m(&p[1..], &s[1..]),
        }
    }
    m(pattern, s)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scores_sort_as_numbers() {
        let xs = [
            f64::NEG_INFINITY,
            -1e9,
            -2.5,
            -0.0,
            0.0,
            1e-9,
            3.0,
            1e300,
            f64::INFINITY,
        ];
        for w in xs.windows(2) {
            assert!(score_bytes(w[0]) <= score_bytes(w[1]), "{w:?}");
        }
        for x in xs {
            assert_eq!(score_of(&score_bytes(x)), Some(x));
        }
        // −0 and +0 are one score: ZRANGEBYSCORE z 0 0 finds a member added with −0
        assert_eq!(score_bytes(-0.0), score_bytes(0.0));
    }

    #[test]
    fn hashes_round_trip() {
        let mut h = BTreeMap::new();
        h.insert(b"f1".to_vec(), b"v1".to_vec());
        h.insert(b"field2".to_vec(), vec![0, 1, 2]);
        let enc = hash(&h);
        assert_eq!(enc[0], HASH);
        assert_eq!(decode_hash(&enc[1..]).unwrap(), h);
        assert!(decode_hash(&enc[1..enc.len() - 1]).is_none());
    }

    #[test]
    fn globs() {
        assert!(glob(b"user*", b"user42"));
        assert!(glob(b"h?llo", b"hello"));
        assert!(glob(b"h[ae]llo", b"hallo") && !glob(b"h[^ae]llo", b"hallo"));
        assert!(glob(b"k[0-9]", b"k7") && !glob(b"k[0-9]", b"kx"));
        assert!(!glob(b"user*", b"use"));
        assert!(glob(b"a\\*b", b"a*b"));
    }
}

//! Bloom filters for the engine's runs (Cosine Table 1: per block, per file or per run), built with the
//! `bloomfilter` crate, with bits per key per level from Monkey's allocation of M_BF
//! ([`cosine_cost_model::bloom::monkey_bits_per_key`]).
//!
//! Encoding (little-endian): `[f32 bits_per_key][u32 len][len bytes of bloomfilter's own serialisation]`.
//! The caller (the run file) checksums the whole section.
#![warn(missing_docs)]

use bloomfilter::Bloom;
use cosine_cost_model::bloom::{monkey_bits_per_key, RunGroup};
use thiserror::Error;

/// The fixed seed of every filter, so that a filter decoded from disk hashes as it did when it was built.
const SEED: [u8; 32] = *b"cosine-engine-bloom-filter-seed!";

/// A filter section that does not decode.
#[derive(Debug, Error, Clone, PartialEq, Eq)]
#[error("filter encoding is invalid: {0}")]
pub struct FilterDecodeError(pub &'static str);

/// One Bloom filter over a set of keys.
pub struct KeyFilter {
    bloom: Bloom<[u8]>,
    bits_per_key: f32,
}

impl KeyFilter {
    /// Builds a filter over `keys` with `bits_per_key` bits per key; `None` when no bits are given or there
    /// are no keys (a level without a filter).
    pub fn build<'a>(
        keys: impl IntoIterator<Item = &'a [u8]>,
        count: usize,
        bits_per_key: f64,
    ) -> Option<Self> {
        if count == 0 || bits_per_key.is_nan() || bits_per_key <= 0.05 {
            return None;
        }
        let bytes = ((count as f64 * bits_per_key) / 8.0).ceil().max(1.0) as usize;
        let mut bloom = Bloom::new_with_seed(bytes, count, &SEED).ok()?;
        for k in keys {
            bloom.set(k);
        }
        Some(KeyFilter {
            bloom,
            bits_per_key: bits_per_key as f32,
        })
    }

    /// False means the key is certainly absent; true means it may be present.
    pub fn may_contain(&self, key: &[u8]) -> bool {
        self.bloom.check(key)
    }

    /// Bytes of memory this filter holds.
    pub fn memory_bytes(&self) -> usize {
        (self.bloom.len() / 8) as usize
    }

    /// Bits per key it was built with.
    pub fn bits_per_key(&self) -> f64 {
        self.bits_per_key as f64
    }

    /// Serialises the filter.
    pub fn encode(&self, out: &mut Vec<u8>) {
        let bytes = self.bloom.to_bytes();
        out.extend_from_slice(&self.bits_per_key.to_le_bytes());
        out.extend_from_slice(&(bytes.len() as u32).to_le_bytes());
        out.extend_from_slice(&bytes);
    }

    /// Decodes one filter from the front of `input`, returning it and the bytes consumed.
    pub fn decode(input: &[u8]) -> Result<(Self, usize), FilterDecodeError> {
        if input.len() < 8 {
            return Err(FilterDecodeError("truncated header"));
        }
        let bits_per_key = f32::from_le_bytes(
            input[0..4]
                .try_into()
                .map_err(|_| FilterDecodeError("header"))?,
        );
        let len = u32::from_le_bytes(
            input[4..8]
                .try_into()
                .map_err(|_| FilterDecodeError("header"))?,
        ) as usize;
        let body = input
            .get(8..8 + len)
            .ok_or(FilterDecodeError("truncated body"))?;
        let bloom = Bloom::from_slice(body).map_err(FilterDecodeError)?;
        Ok((
            KeyFilter {
                bloom,
                bits_per_key,
            },
            8 + len,
        ))
    }
}

/// The filters of one file: one filter for the whole file, or one per data block.
pub enum FileFilter {
    /// One filter over every key of the file (file or run granularity).
    Whole(KeyFilter),
    /// One filter per data block, indexed by block number.
    PerBlock(Vec<Option<KeyFilter>>),
}

impl FileFilter {
    /// Whether `key` may be in the file (`block` is the block the fences point to, for per-block filters).
    pub fn may_contain(&self, key: &[u8], block: Option<usize>) -> bool {
        match self {
            FileFilter::Whole(f) => f.may_contain(key),
            FileFilter::PerBlock(v) => match block.and_then(|b| v.get(b)) {
                Some(Some(f)) => f.may_contain(key),
                _ => true,
            },
        }
    }

    /// Bytes of memory held.
    pub fn memory_bytes(&self) -> usize {
        match self {
            FileFilter::Whole(f) => f.memory_bytes(),
            FileFilter::PerBlock(v) => v.iter().flatten().map(|f| f.memory_bytes()).sum(),
        }
    }

    /// Serialises: `[u8 kind]` then one filter (kind 1) or `[u32 n]` and n × (`[u8 present]` filter) (kind 2).
    pub fn encode(&self) -> Vec<u8> {
        let mut out = Vec::new();
        match self {
            FileFilter::Whole(f) => {
                out.push(1);
                f.encode(&mut out);
            }
            FileFilter::PerBlock(v) => {
                out.push(2);
                out.extend_from_slice(&(v.len() as u32).to_le_bytes());
                for f in v {
                    match f {
                        Some(f) => {
                            out.push(1);
                            f.encode(&mut out);
                        }
                        None => out.push(0),
                    }
                }
            }
        }
        out
    }

    /// Decodes a file's filter section.
    pub fn decode(input: &[u8]) -> Result<Self, FilterDecodeError> {
        match input.first() {
            Some(1) => Ok(FileFilter::Whole(KeyFilter::decode(&input[1..])?.0)),
            Some(2) => {
                let n = u32::from_le_bytes(
                    input
                        .get(1..5)
                        .ok_or(FilterDecodeError("count"))?
                        .try_into()
                        .unwrap_or([0; 4]),
                ) as usize;
                let mut pos = 5;
                let mut v = Vec::with_capacity(n.min(1 << 20));
                for _ in 0..n {
                    match input.get(pos) {
                        Some(1) => {
                            let (f, used) = KeyFilter::decode(&input[pos + 1..])?;
                            v.push(Some(f));
                            pos += 1 + used;
                        }
                        Some(0) => {
                            v.push(None);
                            pos += 1;
                        }
                        _ => return Err(FilterDecodeError("block filter tag")),
                    }
                }
                Ok(FileFilter::PerBlock(v))
            }
            _ => Err(FilterDecodeError("kind")),
        }
    }
}

/// Bits per key for each level 1..=levels of a tree of size ratio `t` over `entries` entries with K runs per
/// level above the last and Z at the last, given `filter_bytes` of filter memory: Monkey's allocation (FPR
/// proportional to run size), computed by the cost model. Levels that get no filter have 0.
pub fn bits_per_key_per_level(
    filter_bytes: u64,
    entries: f64,
    levels: u32,
    t: f64,
    k: f64,
    z: f64,
) -> Vec<f64> {
    if levels == 0 || entries <= 0.0 {
        return Vec::new();
    }
    let groups: Vec<RunGroup> = (1..=levels)
        .map(|i| {
            let runs = if i == levels { z } else { k };
            let share = cosine_cost_model::layout::data_share(i, levels, t);
            RunGroup {
                entries: (entries * share / runs).max(1.0),
                runs,
            }
        })
        .collect();
    monkey_bits_per_key(&groups, 8.0 * filter_bytes as f64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn no_false_negatives_and_about_the_expected_fpr() {
        let keys: Vec<Vec<u8>> = (0..10_000u32).map(|i| i.to_be_bytes().to_vec()).collect();
        let f = KeyFilter::build(keys.iter().map(|k| k.as_slice()), keys.len(), 10.0).unwrap();
        assert!(keys.iter().all(|k| f.may_contain(k)));
        let fp = (10_000..110_000u32)
            .filter(|i| f.may_contain(&i.to_be_bytes()))
            .count() as f64
            / 100_000.0;
        assert!(fp < 0.02, "fpr {fp}");
        assert!(KeyFilter::build(keys.iter().map(|k| k.as_slice()), keys.len(), 0.0).is_none());
    }

    #[test]
    fn round_trip() {
        let keys: Vec<Vec<u8>> = (0..500u32).map(|i| i.to_le_bytes().to_vec()).collect();
        let whole = FileFilter::Whole(
            KeyFilter::build(keys.iter().map(|k| k.as_slice()), 500, 8.0).unwrap(),
        );
        let back = FileFilter::decode(&whole.encode()).unwrap();
        assert!(keys.iter().all(|k| back.may_contain(k, None)));
        let per = FileFilter::PerBlock(vec![
            KeyFilter::build(keys[..250].iter().map(|k| k.as_slice()), 250, 8.0),
            None,
            KeyFilter::build(keys[250..].iter().map(|k| k.as_slice()), 250, 8.0),
        ]);
        let back = FileFilter::decode(&per.encode()).unwrap();
        assert!(back.may_contain(&keys[0], Some(0)));
        assert!(back.may_contain(&keys[300], Some(2)));
        assert!(back.may_contain(b"anything", Some(1)));
        assert!(FileFilter::decode(&[9, 9, 9]).is_err());
        assert!(FileFilter::decode(&whole.encode()[..10]).is_err());
    }

    #[test]
    fn monkey_gives_smaller_levels_more_bits() {
        let bits = bits_per_key_per_level(10 * 1_000_000 / 8, 1e6, 4, 10.0, 1.0, 1.0);
        assert_eq!(bits.len(), 4);
        assert!(bits.windows(2).all(|w| w[0] > w[1]));
        // the average over entries is the budget: 10 bits per key
        let avg: f64 = (1..=4)
            .map(|i| bits[i - 1] * cosine_cost_model::layout::data_share(i as u32, 4, 10.0))
            .sum();
        assert!((avg - 10.0).abs() < 0.01, "{avg}");
    }
}

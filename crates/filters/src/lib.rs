//! Bloom filters for the engine's runs (Cosine Table 1: per block, per file or per run), built with the
//! `bloomfilter` crate, with bits per key per level from Monkey's allocation of M_BF
//! ([`cosine_design::shape::monkey_bits_per_key`]).
//!
//! Encoding (little-endian): `[f32 bits_per_key][u32 len][len bytes of bloomfilter's own serialisation]`.
//! The caller (the run file) checksums the whole section.
#![deny(missing_docs)]
// a library reports failures as typed errors; unit tests may unwrap
#![deny(clippy::unwrap_used)]
#![cfg_attr(test, allow(clippy::unwrap_used))]

use bloomfilter::Bloom;
pub use cosine_design::shape::bits_per_key_per_level;
use cosine_design::FilterGranularity;
use cosine_fence_pointers::stable_hash;
use thiserror::Error;

/// The fixed seed of every filter, so that a filter decoded from disk hashes as it did when it was built.
const SEED: [u8; 32] = *b"cosine-engine-bloom-filter-seed!";

/// A filter section that does not decode.
#[derive(Debug, Error, Clone, PartialEq, Eq)]
#[error("filter encoding is invalid: {0}")]
pub struct FilterDecodeError(pub &'static str);

/// What a filter's items are.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Items {
    /// The keys' bytes (files written before filters were built over hashes).
    Keys,
    /// The keys' [`stable_hash`]es: a whole-file or whole-run filter.
    Hashes,
    /// A key's hash mixed with the number of its block: per-block filters in one bit array, so a block
    /// costs no filter of its own (a Bloom filter per block would carry its ~200-byte header per block).
    BlockHashes,
}

/// One Bloom filter over a set of keys. The writer keeps 8 bytes per key (its hash) until the filter is
/// sized, not the keys.
pub struct KeyFilter {
    bloom: Bloom<[u8]>,
    bits_per_key: f32,
    items: Items,
}

/// The item a key (by its [`stable_hash`]) in block `block` is filtered under in a per-block filter.
pub fn block_item(hash: u64, block: u32) -> u64 {
    hash ^ (block as u64 + 1).wrapping_mul(0x9E37_79B9_7F4A_7C15)
}

impl KeyFilter {
    /// Builds a filter over `keys` with `bits_per_key` bits per key; `None` when no bits are given or there
    /// are no keys (a level without a filter).
    pub fn build<'a>(
        keys: impl IntoIterator<Item = &'a [u8]>,
        count: usize,
        bits_per_key: f64,
    ) -> Option<Self> {
        let mut f = Self::sized(count, bits_per_key, Items::Keys)?;
        for k in keys {
            f.bloom.set(k);
        }
        Some(f)
    }

    fn sized(count: usize, bits_per_key: f64, items: Items) -> Option<Self> {
        if count == 0 || bits_per_key.is_nan() || bits_per_key <= 0.05 {
            return None;
        }
        let bytes = ((count as f64 * bits_per_key) / 8.0).ceil().max(1.0) as usize;
        let bloom = Bloom::new_with_seed(bytes, count, &SEED).ok()?;
        Some(KeyFilter {
            bloom,
            bits_per_key: bits_per_key as f32,
            items,
        })
    }

    /// Builds a filter over keys given by their [`stable_hash`]es.
    pub fn build_hashed(hashes: &[u64], bits_per_key: f64) -> Option<Self> {
        let mut f = Self::sized(hashes.len(), bits_per_key, Items::Hashes)?;
        for h in hashes {
            f.bloom.set(&h.to_le_bytes());
        }
        Some(f)
    }

    /// Builds per-block filters in one, over the [`block_item`]s of (key hash, block number) pairs.
    pub fn build_per_block(items: &[u64], bits_per_key: f64) -> Option<Self> {
        let mut f = Self::build_hashed(items, bits_per_key)?;
        f.items = Items::BlockHashes;
        Some(f)
    }

    /// False means the key is certainly absent (from block `block`, for a per-block filter); true means it
    /// may be present. A per-block filter asked without a block answers true.
    pub fn may_contain_in(&self, key: &[u8], block: Option<u32>) -> bool {
        match (self.items, block) {
            (Items::Keys, _) => self.bloom.check(key),
            (Items::Hashes, _) => self.bloom.check(&stable_hash(key).to_le_bytes()),
            (Items::BlockHashes, Some(b)) => self
                .bloom
                .check(&block_item(stable_hash(key), b).to_le_bytes()),
            (Items::BlockHashes, None) => true,
        }
    }

    /// False means the key is certainly absent; true means it may be present.
    pub fn may_contain(&self, key: &[u8]) -> bool {
        self.may_contain_in(key, None)
    }

    /// Bytes of memory this filter holds: its struct (SipHash keys and the bit map's header included) and its
    /// bit array.
    pub fn memory_bytes(&self) -> usize {
        FILTER_OVERHEAD_BYTES + (self.bloom.len() / 8) as usize
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
                items: Items::Keys,
            },
            8 + len,
        ))
    }
}

/// The filters of one file: one filter for the whole file, one over (key, block) pairs, or (files written
/// before that) one per data block.
pub enum FileFilter {
    /// One filter over every key of the file (file or run granularity), or over (key, block) pairs (block
    /// granularity).
    Whole(KeyFilter),
    /// One filter per data block, indexed by block number.
    PerBlock(Vec<Option<KeyFilter>>),
}

/// Builds one file's filter as its keys are written, in key order: the one place a [`FilterGranularity`] becomes
/// a [`FileFilter`]. A new kind of filter is a variant of [`FileFilter`] (its probe, encoding and memory) and its
/// arm here; the run-file writer only hands over each key and its block.
pub struct FilterBuilder {
    granularity: FilterGranularity,
    bits_per_key: f64,
    /// The keys' stable hashes (mixed with their block numbers for block granularity): 8 bytes a key until
    /// the filter is built.
    items: Vec<u64>,
}

impl FilterBuilder {
    /// A builder for `bits_per_key` bits a key at `granularity`, or `None` when there are no bits (no filter).
    pub fn new(granularity: FilterGranularity, bits_per_key: f64) -> Option<Self> {
        (bits_per_key > 0.0).then(|| FilterBuilder {
            granularity,
            bits_per_key,
            items: Vec::new(),
        })
    }

    /// Adds a key (its [`stable_hash`]) written to data block `block`.
    pub fn add(&mut self, key_hash: u64, block: u32) {
        self.items.push(match self.granularity {
            FilterGranularity::Block => block_item(key_hash, block),
            FilterGranularity::File | FilterGranularity::Run => key_hash,
        });
    }

    /// The finished filter (`None` for a file without keys).
    pub fn finish(self) -> Option<FileFilter> {
        match self.granularity {
            FilterGranularity::Block => KeyFilter::build_per_block(&self.items, self.bits_per_key),
            FilterGranularity::File | FilterGranularity::Run => {
                KeyFilter::build_hashed(&self.items, self.bits_per_key)
            }
        }
        .map(FileFilter::Whole)
    }
}

/// Heap bytes of a Bloom filter's bit map beyond its bits (the `bloomfilter` crate's header: version, k, seed).
const BLOOM_HEADER_BYTES: usize = 1 + 8 + 4 + 32;

/// Bytes a file's filter takes beyond its bits: the filter's struct (SipHash keys included) and its bit
/// map's header. A design's M_BF pays this once per file.
pub const FILTER_OVERHEAD_BYTES: usize = std::mem::size_of::<KeyFilter>() + BLOOM_HEADER_BYTES;

impl FileFilter {
    /// Whether `key` may be in the file (`block` is the block the fences point to, for per-block filters).
    pub fn may_contain(&self, key: &[u8], block: Option<usize>) -> bool {
        match self {
            FileFilter::Whole(f) => f.may_contain_in(key, block.map(|b| b as u32)),
            FileFilter::PerBlock(v) => match block.and_then(|b| v.get(b)) {
                Some(Some(f)) => f.may_contain(key),
                _ => true,
            },
        }
    }

    /// Whether the filter can answer before the block is known (not a per-block one).
    pub fn is_whole_file(&self) -> bool {
        matches!(self, FileFilter::Whole(f) if f.items != Items::BlockHashes)
    }

    /// Bytes of memory held: the filters' structs and bit arrays.
    pub fn memory_bytes(&self) -> usize {
        match self {
            FileFilter::Whole(f) => f.memory_bytes(),
            FileFilter::PerBlock(v) => {
                v.capacity() * std::mem::size_of::<Option<KeyFilter>>()
                    + v.iter()
                        .flatten()
                        .map(|f| f.memory_bytes() - std::mem::size_of::<KeyFilter>())
                        .sum::<usize>()
            }
        }
    }

    /// Serialises: `[u8 kind]` then one filter over keys (kind 1), over key hashes (kind 3) or over (key hash,
    /// block) pairs (kind 4), or `[u32 n]` and n × (`[u8 present]` filter over keys) (kind 2).
    pub fn encode(&self) -> Vec<u8> {
        let mut out = Vec::new();
        match self {
            FileFilter::Whole(f) => {
                out.push(match f.items {
                    Items::Keys => 1,
                    Items::Hashes => 3,
                    Items::BlockHashes => 4,
                });
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
            Some(kind @ (3 | 4)) => {
                let mut f = KeyFilter::decode(&input[1..])?.0;
                f.items = if *kind == 3 {
                    Items::Hashes
                } else {
                    Items::BlockHashes
                };
                Ok(FileFilter::Whole(f))
            }
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_builder_makes_the_granularitys_filter() {
        let keys: Vec<Vec<u8>> = (0..2_000u32).map(|i| i.to_be_bytes().to_vec()).collect();
        let block = |i: usize| (i / 100) as u32;
        assert!(FilterBuilder::new(FilterGranularity::File, 0.0).is_none());
        for g in [
            FilterGranularity::File,
            FilterGranularity::Run,
            FilterGranularity::Block,
        ] {
            let mut b = FilterBuilder::new(g, 10.0).unwrap();
            for (i, k) in keys.iter().enumerate() {
                b.add(stable_hash(k), block(i));
            }
            let f = b.finish().unwrap();
            // a block filter answers for (key, block) pairs only, so it cannot answer before the block is known
            assert_eq!(f.is_whole_file(), g != FilterGranularity::Block, "{g:?}");
            for (i, k) in keys.iter().enumerate() {
                assert!(
                    f.may_contain(k, Some(block(i) as usize)),
                    "{g:?}: a false negative"
                );
            }
            // about 1% false positives at 10 bits a key, on keys never added
            let fp = (10_000..30_000u32)
                .filter(|i| f.may_contain(&i.to_be_bytes(), Some(3)))
                .count();
            assert!(fp < 600, "{g:?}: {fp} false positives of 20,000");
        }
    }

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
    fn a_filter_over_key_hashes_answers_like_one_over_keys() {
        let keys: Vec<Vec<u8>> = (0..5000u32)
            .map(|i| format!("key{i}").into_bytes())
            .collect();
        let hashes: Vec<u64> = keys.iter().map(|k| stable_hash(k)).collect();
        let f = KeyFilter::build_hashed(&hashes, 10.0).unwrap();
        assert!(keys.iter().all(|k| f.may_contain(k)));
        let fp = (0..20_000u32)
            .filter(|i| f.may_contain(format!("absent{i}").as_bytes()))
            .count();
        assert!(fp < 400, "{fp} false positives of 20000 at 10 bits per key");
        let back = FileFilter::decode(&FileFilter::Whole(f).encode()).unwrap();
        assert!(keys.iter().all(|k| back.may_contain(k, None)));
        assert!(back.is_whole_file());
    }

    #[test]
    fn per_block_filters_in_one_bit_array() {
        // 50 keys a block
        let pairs: Vec<u64> = (0..5000u32)
            .map(|i| block_item(stable_hash(format!("key{i}").as_bytes()), i / 50))
            .collect();
        let f = FileFilter::Whole(KeyFilter::build_per_block(&pairs, 10.0).unwrap());
        let f = FileFilter::decode(&f.encode()).unwrap();
        assert!(!f.is_whole_file());
        for i in 0..5000u32 {
            let k = format!("key{i}");
            assert!(f.may_contain(k.as_bytes(), Some((i / 50) as usize)));
            // unknown block: no answer
            assert!(f.may_contain(k.as_bytes(), None));
        }
        // a present key asked in another block, and absent keys: about the FPR
        let wrong_block = (0..5000u32)
            .filter(|i| f.may_contain(format!("key{i}").as_bytes(), Some((i / 50 + 1) as usize)))
            .count();
        assert!(wrong_block < 250, "{wrong_block} of 5000");
        // one header for the file, not one per block
        assert!(
            f.memory_bytes() < 5000 * 10 / 8 + 400,
            "{}",
            f.memory_bytes()
        );
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
            .map(|i| bits[i - 1] * cosine_design::shape::data_share(i as u32, 4, 10.0))
            .sum();
        assert!((avg - 10.0).abs() < 0.01, "{avg}");
    }
}

//! Fence pointers (Cosine Table 1, M_FP): how a lookup finds the one block of a file that may hold a key.
//!
//! * [`Fences`]: a lower bound of every data block: the first block's first key, then for each later block the
//!   smallest key above the previous block's last key ([`fence_after`]), so a seek lands on the block that
//!   holds the first key at or after it. Hot levels keep them in memory: a lookup costs no I/O to find its
//!   block.
//! * Cold levels keep them on disk as index blocks, like B-tree internal nodes; only a small top index (the
//!   lowest fence of every index block) stays in memory, so a lookup reads one index block, then one data block.
//! * [`HashIndex`]: for LSH-like designs, a 32-bit tag of every key and its block, in memory: candidate blocks,
//!   walked until one holds the key (tags may collide).
//!
//! Fences and the top index answer [`BlockLocator::locate`]. Encodings are little-endian; the run file checksums
//! them.
#![deny(missing_docs)]
// a library reports failures as typed errors; unit tests may unwrap
#![deny(clippy::unwrap_used)]
#![cfg_attr(test, allow(clippy::unwrap_used))]

use thiserror::Error;

/// Where a block lives in its file.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BlockHandle {
    /// Byte offset in the file.
    pub offset: u64,
    /// Length in bytes (including its checksum).
    pub len: u32,
    /// Block number within its section (data blocks and index blocks are numbered separately).
    pub block: u32,
}

/// The in-memory index a hot run keeps to find a key's block: the part a design picks. Every file also carries
/// its fences on disk under a top index, which a cold run reads instead.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum IndexKind {
    /// [`Fences`]: one lower bound per block, binary-searched (sorted runs of a tree).
    Fences,
    /// [`HashIndex`]: a tag per key naming its block (log-structured hash tables); the file carries it as a
    /// section of its own.
    Hash,
}

/// An index section that does not decode.
#[derive(Debug, Error, Clone, PartialEq, Eq)]
#[error("fence pointers are invalid: {0}")]
pub struct FenceDecodeError(pub &'static str);

/// What a locator says about a key.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Locate {
    /// Read this data block.
    Block(BlockHandle),
    /// Read this index block first (cold level), then locate again in it.
    IndexBlock(BlockHandle),
    /// The key cannot be in this file.
    Absent,
}

/// What names the one block that may hold a key: hot fences, or a cold top index (which names an index block
/// first). A hash index names candidates instead ([`HashIndex::blocks`]); the run file's `Locator` enum is the
/// seam over all three.
pub trait BlockLocator: Send + Sync {
    /// Where `key` may be.
    fn locate(&self, key: &[u8]) -> Locate;
    /// Bytes of memory held.
    fn memory_bytes(&self) -> usize;
}

/// Sorted lower bounds of consecutive blocks (see [`fence_after`]), stored compactly: the keys back to back in one buffer, a
/// 4-byte start offset and a 16-byte block handle each (key + 20 bytes of memory per fence).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Fences {
    arena: Vec<u8>,
    starts: Vec<u32>,
    handles: Vec<BlockHandle>,
}

/// The fence of the block after one whose last key is `prev_last`: the smallest key above it (`prev_last` and a
/// zero byte). Every key above `prev_last`, present or not, then finds the later block, so a seek into the gap
/// between two blocks reads only the block that holds the first key after it. (A block's own first key as its
/// fence would send such a seek to the earlier block first, costing one wasted read per run in 1/B of the
/// seeks; a shorter separator would still do so for part of the gap.)
pub fn fence_after(prev_last: &[u8]) -> Vec<u8> {
    let mut f = Vec::with_capacity(prev_last.len() + 1);
    f.extend_from_slice(prev_last);
    f.push(0);
    f
}

/// Memory per fence beyond its key: the key's start offset (4 bytes) and its block handle (16 bytes).
pub const FENCE_OVERHEAD_BYTES: usize = 20;

impl Fences {
    /// No fences.
    pub fn new() -> Self {
        Self::default()
    }

    /// No fences, with room for `blocks` of them (and their keys, about `key_bytes` in all) reserved.
    pub fn with_capacity(blocks: usize, key_bytes: usize) -> Self {
        Fences {
            arena: Vec::with_capacity(key_bytes),
            starts: Vec::with_capacity(blocks),
            handles: Vec::with_capacity(blocks),
        }
    }

    /// Gives back the room reserved beyond the fences held, so the heap they take is what
    /// [`FenceIndex::memory_bytes`] reports (a vector grown by pushes holds up to twice its length).
    pub fn shrink_to_fit(&mut self) {
        self.arena.shrink_to_fit();
        self.starts.shrink_to_fit();
        self.handles.shrink_to_fit();
    }

    /// Appends the fence of the next block: a lower bound of its keys above every key of the blocks before it.
    pub fn push(&mut self, bound: Vec<u8>, handle: BlockHandle) {
        debug_assert!(self.is_empty() || self.lower_bound(self.len() - 1) <= bound.as_slice());
        self.starts.push(self.arena.len() as u32);
        self.arena.extend_from_slice(&bound);
        self.handles.push(handle);
    }

    /// Number of fences.
    pub fn len(&self) -> usize {
        self.starts.len()
    }

    /// True when empty.
    pub fn is_empty(&self) -> bool {
        self.starts.is_empty()
    }

    /// The index of the last block whose fence is ≤ `key`: the one block that may hold `key`, if any.
    pub fn find(&self, key: &[u8]) -> Option<usize> {
        let (mut lo, mut hi) = (0usize, self.len());
        while lo < hi {
            let mid = lo + (hi - lo) / 2;
            if self.lower_bound(mid) <= key {
                lo = mid + 1;
            } else {
                hi = mid;
            }
        }
        lo.checked_sub(1)
    }

    /// The `i`-th block's handle.
    pub fn handle(&self, i: usize) -> BlockHandle {
        self.handles[i]
    }

    /// The `i`-th block's fence: no key of an earlier block reaches it, and no key of this block is below it.
    pub fn lower_bound(&self, i: usize) -> &[u8] {
        let start = self.starts[i] as usize;
        let end = self
            .starts
            .get(i + 1)
            .map_or(self.arena.len(), |&e| e as usize);
        &self.arena[start..end]
    }

    fn iter(&self) -> impl Iterator<Item = (&[u8], &BlockHandle)> {
        (0..self.len()).map(|i| (self.lower_bound(i), &self.handles[i]))
    }

    /// All handles in order.
    pub fn handles(&self) -> &[BlockHandle] {
        &self.handles
    }

    /// Bytes of memory: keys plus 16 bytes per handle.
    pub fn encoded_entry_bytes(key: &[u8]) -> usize {
        4 + key.len() + 16
    }

    /// Appends the encoding: `[u32 n]` then n × `[u32 klen][key][u64 offset][u32 len][u32 block]`.
    pub fn encode(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(&(self.len() as u32).to_le_bytes());
        for (k, h) in self.iter() {
            out.extend_from_slice(&(k.len() as u32).to_le_bytes());
            out.extend_from_slice(k);
            out.extend_from_slice(&h.offset.to_le_bytes());
            out.extend_from_slice(&h.len.to_le_bytes());
            out.extend_from_slice(&h.block.to_le_bytes());
        }
    }

    /// Decodes an encoding made by `encode`.
    pub fn decode(input: &[u8]) -> Result<Self, FenceDecodeError> {
        let mut r = Reader { buf: input, pos: 0 };
        let n = r.u32()? as usize;
        if n > input.len() / 20 + 1 {
            return Err(FenceDecodeError("count larger than the section"));
        }
        let mut f = Fences::new();
        for _ in 0..n {
            let klen = r.u32()? as usize;
            let key = r.bytes(klen)?.to_vec();
            let offset = r.u64()?;
            let len = r.u32()?;
            let block = r.u32()?;
            if !f.is_empty() && f.lower_bound(f.len() - 1) > key.as_slice() {
                return Err(FenceDecodeError("keys out of order"));
            }
            f.push(key, BlockHandle { offset, len, block });
        }
        Ok(f)
    }

    /// Splits the fences into index blocks of about `block_bytes` each (encoded), for the cold layout.
    /// Returns the encoded blocks with the lowest fence of each.
    pub fn split_into_blocks(&self, block_bytes: usize) -> Vec<(Vec<u8>, Vec<u8>)> {
        let mut out = Vec::new();
        let mut cur = Fences::new();
        let mut size = 4;
        for (k, h) in self.iter() {
            let add = Self::encoded_entry_bytes(k);
            if !cur.is_empty() && size + add > block_bytes {
                let mut enc = Vec::with_capacity(size);
                cur.encode(&mut enc);
                out.push((cur.lower_bound(0).to_vec(), enc));
                cur = Fences::new();
                size = 4;
            }
            cur.push(k.to_vec(), *h);
            size += add;
        }
        if !cur.is_empty() {
            let mut enc = Vec::new();
            cur.encode(&mut enc);
            out.push((cur.lower_bound(0).to_vec(), enc));
        }
        out
    }
}

impl BlockLocator for Fences {
    fn locate(&self, key: &[u8]) -> Locate {
        match self.find(key) {
            Some(i) => Locate::Block(self.handles[i]),
            None => Locate::Absent,
        }
    }
    fn memory_bytes(&self) -> usize {
        self.arena.len() + self.len() * FENCE_OVERHEAD_BYTES
    }
}

/// The in-memory top of a cold file's cascading index: one fence per index block.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct TopIndex(pub Fences);

impl BlockLocator for TopIndex {
    fn locate(&self, key: &[u8]) -> Locate {
        match self.0.find(key) {
            Some(i) => Locate::IndexBlock(self.0.handle(i)),
            None => Locate::Absent,
        }
    }
    fn memory_bytes(&self) -> usize {
        self.0.memory_bytes()
    }
}

/// FNV-1a, 64 bits: a hash that is stable across builds, so hash indexes stored on disk stay valid.
pub fn stable_hash(key: &[u8]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in key {
        h ^= *b as u64;
        h = h.wrapping_mul(0x0000_0100_0000_01b3);
    }
    h
}

/// A hash index in FASTER's manner (LSH-like designs): per key a 32-bit tag (the upper half of its stable
/// hash) and the number of its block, sorted by tag in two flat arrays, 8 bytes per key in memory, plus a
/// 16-byte handle per block. A tag match only names a candidate block: the reader confirms the key by reading
/// it, and tries the next candidate when two keys share a tag (about one lookup in 2^32 / n).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct HashIndex {
    tags: Vec<u32>,
    blocks: Vec<u32>,
    handles: Vec<BlockHandle>,
}

/// The tag of a key's [`stable_hash`]: the upper half of the hash after a full avalanche (SplitMix64's
/// finaliser). FNV-1a's own upper bits barely depend on a key's last bytes, so keys such as `user1234` and
/// `user1235` would share a tag and every lookup would read blocks of other keys.
fn tag(hash: u64) -> u32 {
    let mut z = hash;
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^= z >> 31;
    (z >> 32) as u32
}

/// The first position in the sorted `tags` whose tag is at least `t`. Tags are uniform over `u32` (an avalanched
/// hash), so the search starts where `t` would lie, `t`·n / 2^32, and gallops outward to bracket the answer
/// before a binary search inside the bracket: a few probes within a few kilobytes of the start (the k-th of n
/// uniform tags lies within about √n places of k), where a binary search over the whole array makes log₂ n
/// probes, the first ones a cache miss each.
fn first_at_least(tags: &[u32], t: u32) -> usize {
    let n = tags.len();
    if n == 0 {
        return 0;
    }
    let below = |x: &u32| *x < t;
    let guess = ((u64::from(t) * n as u64) >> 32) as usize;
    if tags[guess] < t {
        // the answer is in (guess, n]: every tag before `lo` is below t
        let mut lo = guess + 1;
        let mut step = 1;
        loop {
            let hi = lo + step;
            if hi >= n {
                return lo + tags[lo..].partition_point(below);
            }
            if tags[hi] >= t {
                return lo + tags[lo..hi].partition_point(below);
            }
            lo = hi + 1;
            step *= 2;
        }
    } else {
        // the answer is in [0, guess]: the tag at `hi` is at least t
        let mut hi = guess;
        let mut step = 1;
        loop {
            if hi < step {
                return tags[..hi].partition_point(below);
            }
            let lo = hi - step;
            if tags[lo] < t {
                return lo + 1 + tags[lo + 1..hi].partition_point(below);
            }
            hi = lo;
            step *= 2;
        }
    }
}

/// The tag `key` is indexed under in a [`HashIndex`].
pub fn key_tag(key: &[u8]) -> u32 {
    tag(stable_hash(key))
}

impl HashIndex {
    /// An index over `entries` (key [`stable_hash`], block number) with the blocks' handles.
    pub fn build(entries: impl IntoIterator<Item = (u64, u32)>, handles: Vec<BlockHandle>) -> Self {
        Self::from_tags(
            entries.into_iter().map(|(h, b)| (tag(h), b)).collect(),
            handles,
        )
    }

    /// Encodes an index over `pairs` of (key [`stable_hash`], block number) without building it: the section
    /// keeps the whole hashes, and [`HashIndex::decode`] derives the tags.
    pub fn encode_pairs(pairs: &mut [(u64, u32)], handles: &[BlockHandle], out: &mut Vec<u8>) {
        pairs.sort_unstable();
        out.extend_from_slice(&(pairs.len() as u64).to_le_bytes());
        for (h, b) in pairs.iter() {
            out.extend_from_slice(&h.to_le_bytes());
            out.extend_from_slice(&b.to_le_bytes());
        }
        out.extend_from_slice(&(handles.len() as u32).to_le_bytes());
        for h in handles {
            out.extend_from_slice(&h.offset.to_le_bytes());
            out.extend_from_slice(&h.len.to_le_bytes());
            out.extend_from_slice(&h.block.to_le_bytes());
        }
    }

    /// An index over `pairs` of ([`key_tag`], block number), sorted in place (a writer collects 8 bytes a key).
    pub fn from_tags(mut pairs: Vec<(u32, u32)>, handles: Vec<BlockHandle>) -> Self {
        pairs.sort_unstable();
        pairs.dedup();
        let tags: Vec<u32> = pairs.iter().map(|p| p.0).collect();
        let blocks: Vec<u32> = pairs.iter().map(|p| p.1).collect();
        drop(pairs);
        let mut handles = handles;
        handles.shrink_to_fit();
        HashIndex {
            tags,
            blocks,
            handles,
        }
    }

    /// Every block that may hold `key`, in block order (one unless keys share its tag).
    pub fn blocks(&self, key: &[u8]) -> impl Iterator<Item = BlockHandle> + '_ {
        let t = tag(stable_hash(key));
        let lo = first_at_least(&self.tags, t);
        // (tags are shared by about one key in 2^32 / n: the run of equal ones is walked, not searched)
        let hi = lo + self.tags[lo..].iter().take_while(|x| **x == t).count();
        self.blocks[lo..hi]
            .iter()
            .map(move |b| self.handles[*b as usize])
    }

    /// Keys indexed (distinct tag and block pairs).
    pub fn len(&self) -> usize {
        self.tags.len()
    }

    /// True when nothing is indexed.
    pub fn is_empty(&self) -> bool {
        self.tags.is_empty()
    }

    /// Decodes [`HashIndex::encode_pairs`]'s output: `[u64 n]` n × `[u64 hash][u32 block]`, then `[u32 m]`
    /// m × handle (`[u64 off][u32 len][u32 block]`).
    pub fn decode(input: &[u8]) -> Result<Self, FenceDecodeError> {
        let mut r = Reader { buf: input, pos: 0 };
        let n = r.u64()? as usize;
        if n > input.len() / 12 + 1 {
            return Err(FenceDecodeError("hash count larger than the section"));
        }
        // straight to (tag, block): the whole hashes are never held (a 16-byte pair a key would more than
        // double the transient memory of making a file hot)
        let mut pairs = Vec::with_capacity(n);
        for _ in 0..n {
            pairs.push((tag(r.u64()?), r.u32()?));
        }
        let m = r.u32()? as usize;
        if m > input.len() / 16 + 1 {
            return Err(FenceDecodeError("handle count larger than the section"));
        }
        let mut handles = Vec::with_capacity(m);
        for _ in 0..m {
            handles.push(BlockHandle {
                offset: r.u64()?,
                len: r.u32()?,
                block: r.u32()?,
            });
        }
        if pairs.iter().any(|(_, b)| *b as usize >= handles.len()) {
            return Err(FenceDecodeError("block number out of range"));
        }
        Ok(HashIndex::from_tags(pairs, handles))
    }

    /// The memory a [`HashIndex::decode`] of `input` would take, from the section's counts alone (no sort, no
    /// allocation): what a run file weighs against M_FP when it opens, before it is made hot. At most the
    /// decoded index's bytes (it drops the rare pairs two keys of one block share by tag). The counts must
    /// account for the whole section.
    pub fn decoded_bytes(input: &[u8]) -> Result<usize, FenceDecodeError> {
        let mut r = Reader { buf: input, pos: 0 };
        let n = r.u64()? as usize;
        if n > input.len() / 12 + 1 {
            return Err(FenceDecodeError("hash count larger than the section"));
        }
        r.pos += n * 12;
        let m = r.u32()? as usize;
        if r.pos + m * 16 != input.len() {
            return Err(FenceDecodeError(
                "hash section length does not match its counts",
            ));
        }
        Ok(n * HASH_INDEX_BYTES_PER_KEY + m * std::mem::size_of::<BlockHandle>())
    }
}

/// Bytes of memory per key of [`HashIndex`]: a 4-byte tag and a 4-byte block number.
pub const HASH_INDEX_BYTES_PER_KEY: usize = 8;

// A hash index is not a [`BlockLocator`]: tags collide, so it names candidate blocks ([`HashIndex::blocks`]),
// which a reader must walk until one holds the key, where a locator names the one block.
impl HashIndex {
    /// Bytes of memory held: 4-byte tags and block numbers, and the block handles.
    pub fn memory_bytes(&self) -> usize {
        (self.tags.capacity() + self.blocks.capacity()) * 4
            + self.handles.capacity() * std::mem::size_of::<BlockHandle>()
    }
}

struct Reader<'a> {
    buf: &'a [u8],
    pos: usize,
}

impl<'a> Reader<'a> {
    fn bytes(&mut self, n: usize) -> Result<&'a [u8], FenceDecodeError> {
        let end = self
            .pos
            .checked_add(n)
            .ok_or(FenceDecodeError("length overflow"))?;
        let s = self
            .buf
            .get(self.pos..end)
            .ok_or(FenceDecodeError("truncated"))?;
        self.pos = end;
        Ok(s)
    }
    fn u32(&mut self) -> Result<u32, FenceDecodeError> {
        Ok(u32::from_le_bytes(
            self.bytes(4)?
                .try_into()
                .map_err(|_| FenceDecodeError("u32"))?,
        ))
    }
    fn u64(&mut self) -> Result<u64, FenceDecodeError> {
        Ok(u64::from_le_bytes(
            self.bytes(8)?
                .try_into()
                .map_err(|_| FenceDecodeError("u64"))?,
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn h(i: u32) -> BlockHandle {
        BlockHandle {
            offset: i as u64 * 100,
            len: 100,
            block: i,
        }
    }

    #[test]
    fn find_the_block() {
        let mut f = Fences::new();
        for (i, k) in [b"b", b"d", b"f"].iter().enumerate() {
            f.push(k.to_vec(), h(i as u32));
        }
        assert_eq!(f.locate(b"a"), Locate::Absent);
        assert_eq!(f.locate(b"b"), Locate::Block(h(0)));
        assert_eq!(f.locate(b"c"), Locate::Block(h(0)));
        assert_eq!(f.locate(b"e"), Locate::Block(h(1)));
        assert_eq!(f.locate(b"z"), Locate::Block(h(2)));
    }

    proptest! {
        /// The galloping search finds what a binary search over the whole array finds, for any sorted tags
        /// (clustered ones too, where the start guess is far off) and any probe.
        #[test]
        fn first_at_least_is_the_partition_point(mut tags in proptest::collection::vec(any::<u32>(), 0..400),
                                                 cluster in any::<bool>(), probe in any::<u32>(), pick in any::<usize>()) {
            if cluster {
                // tags crowded into a narrow range, many equal
                for t in &mut tags {
                    *t = 1_000_000 + *t % 50;
                }
            }
            tags.sort_unstable();
            let mut probes = vec![probe, 0, u32::MAX, 1_000_025];
            if !tags.is_empty() {
                let t = tags[pick % tags.len()];
                probes.extend([t, t.wrapping_add(1), t.wrapping_sub(1)]);
            }
            for t in probes {
                prop_assert_eq!(first_at_least(&tags, t), tags.partition_point(|x| *x < t), "tag {}", t);
            }
        }
    }

    proptest! {
        /// A block's fence lies above the previous block's last key and at or below every later key, so every
        /// key of the block finds it, and so does every seek into the gap before it.
        #[test]
        fn fence_after_splits_the_gap(a in proptest::collection::vec(any::<u8>(), 0..12),
                                      b in proptest::collection::vec(any::<u8>(), 0..12)) {
            let f = fence_after(&a);
            prop_assert!(a.as_slice() < f.as_slice());
            if b > a {
                prop_assert!(f.as_slice() <= b.as_slice());
            }
        }
    }

    #[test]
    fn hash_index_round_trip() {
        let mut pairs: Vec<(u64, u32)> = (0..100u32)
            .map(|i| (stable_hash(&i.to_le_bytes()), i / 10))
            .collect();
        let handles: Vec<BlockHandle> = (0..10).map(h).collect();
        let idx = HashIndex::build(pairs.clone(), handles.clone());
        let mut enc = Vec::new();
        HashIndex::encode_pairs(&mut pairs, &handles, &mut enc);
        let back = HashIndex::decode(&enc).unwrap();
        assert_eq!(back.blocks(&55u32.to_le_bytes()).next(), Some(h(5)));
        assert!(HashIndex::decode(&enc[..enc.len() - 3]).is_err());
        assert_eq!(back, idx);
        // eight bytes per key and sixteen per block, nothing more
        assert_eq!(idx.memory_bytes(), 100 * HASH_INDEX_BYTES_PER_KEY + 10 * 16);
        // the counts alone give the same bytes, and a section that does not match them is refused
        assert_eq!(HashIndex::decoded_bytes(&enc).unwrap(), back.memory_bytes());
        assert!(HashIndex::decoded_bytes(&enc[..enc.len() - 3]).is_err());
        let mut longer = enc.clone();
        longer.extend_from_slice(&[0; 16]);
        assert!(HashIndex::decoded_bytes(&longer).is_err());
    }

    #[test]
    fn keys_sharing_a_tag_name_every_candidate_block() {
        let k = b"some key";
        let t = key_tag(k);
        // another key with the same tag in block 7, ours in block 2, a third tag in block 3
        let idx = HashIndex::from_tags(
            vec![(t, 7), (t, 2), (t.wrapping_add(1), 3)],
            (0..10).map(h).collect(),
        );
        let found: Vec<BlockHandle> = idx.blocks(k).collect();
        assert_eq!(found, vec![h(2), h(7)]);
        assert_eq!(idx.blocks(b"absent").count(), 0);
    }

    #[test]
    fn similar_keys_get_distinct_tags() {
        // keys that differ in their last bytes, as YCSB's and most applications' do
        let n = 200_000u32;
        let mut tags: Vec<u32> = (0..n)
            .map(|i| key_tag(format!("user{i:08}").as_bytes()))
            .collect();
        tags.sort_unstable();
        tags.dedup();
        // 2e5 keys over 2^32 tags: about 5 collisions expected
        assert!(
            tags.len() as u32 >= n - 50,
            "{} distinct tags of {n}",
            tags.len()
        );
    }

    proptest! {
        #[test]
        fn cascade_agrees_with_flat(mut keys in proptest::collection::btree_set(proptest::collection::vec(any::<u8>(), 1..12), 1..300),
                                    probe in proptest::collection::vec(any::<u8>(), 0..12), block in 64usize..512) {
            let keys: Vec<Vec<u8>> = std::mem::take(&mut keys).into_iter().collect();
            let mut f = Fences::new();
            for (i, k) in keys.iter().enumerate() { f.push(k.clone(), h(i as u32)); }
            let mut enc = Vec::new();
            f.encode(&mut enc);
            prop_assert_eq!(Fences::decode(&enc).unwrap(), f.clone());
            // two-level lookup through index blocks gives the same block as the flat fences
            let blocks = f.split_into_blocks(block);
            let mut top = Fences::new();
            for (i, (first, _)) in blocks.iter().enumerate() { top.push(first.clone(), h(i as u32)); }
            let flat = f.locate(&probe);
            let cascaded = match TopIndex(top).locate(&probe) {
                Locate::IndexBlock(ib) => Fences::decode(&blocks[ib.block as usize].1).unwrap().locate(&probe),
                other => other,
            };
            prop_assert_eq!(flat, cascaded);
        }
    }
}

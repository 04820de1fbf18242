//! The in-memory write buffer of M_B bytes (Cosine Table 1). Two shapes behind one trait:
//! * [`SortedBuffer`]: a concurrent skiplist kept in key order, for LSM, B-tree-like and hybrid designs (range
//!   scans read it in order);
//! * [`HashLogBuffer`]: a hash-indexed log for LSH-like (FASTER-like) designs: O(1) point access, sorted only
//!   when it is scanned or flushed.
//!
//! Writers insert concurrently (the engine serialises writes of one key; the write-ahead log fixes the order of
//! sequence numbers); readers run concurrently with them.
#![deny(missing_docs)]
// a library reports failures as typed errors; unit tests may unwrap
#![deny(clippy::unwrap_used)]
#![cfg_attr(test, allow(clippy::unwrap_used))]

use crossbeam_skiplist::SkipMap;
use parking_lot::{Mutex, RwLock};
use std::collections::HashMap;
use std::ops::Bound;
use std::sync::atomic::{AtomicUsize, Ordering};

/// A stored version of a key: its sequence number and the value, `None` for a deletion (tombstone).
pub type Versioned = (u64, Option<Vec<u8>>);

/// One entry as it leaves the buffer: key, sequence number, value (`None` = tombstone).
pub type BufferEntry = (Vec<u8>, u64, Option<Vec<u8>>);

pub use cosine_design::shape::alloc_bytes;

/// Heap bytes of one skiplist node: the key's and the value's `Vec` headers, the sequence number and the
/// cell's lock, the reference count and a tower of two pointers on average (a node's height is geometric with
/// p = 1/2).
pub const SKIPLIST_NODE_BYTES: usize = alloc_bytes(
    std::mem::size_of::<Vec<u8>>() + std::mem::size_of::<Mutex<Versioned>>() + 8 + 2 * 8,
);

/// Heap bytes of an entry's key and value allocations.
fn payload_bytes(key: &[u8], value: &Option<Vec<u8>>) -> usize {
    alloc_bytes(key.len()) + value.as_ref().map_or(0, |v| alloc_bytes(v.len()))
}

/// Bytes an entry is charged in a [`SortedBuffer`]: what it really takes on the heap, its node and the
/// allocations of its key and value.
pub fn charge(key: &[u8], value: &Option<Vec<u8>>) -> usize {
    SKIPLIST_NODE_BYTES + payload_bytes(key, value)
}

/// The write buffer's operations.
pub trait WriteBuffer: Send + Sync {
    /// Inserts or replaces `key`, unless the buffer holds a newer version of it (a higher `seq`). Safe from
    /// several threads at once; the caller serialises writes of one key.
    fn insert(&self, key: Vec<u8>, seq: u64, value: Option<Vec<u8>>);
    /// The newest version of `key` in the buffer.
    fn get(&self, key: &[u8]) -> Option<Versioned>;
    /// At most `limit` entries with keys in the range, the smallest keys first (a scan pages through the
    /// buffer with this instead of copying all of it).
    fn range(&self, start: Bound<&[u8]>, end: Bound<&[u8]>, limit: usize) -> Vec<BufferEntry>;
    /// Every entry in key order (for flushing), one at a time: a flush never copies the whole buffer.
    fn sorted_iter(&self) -> Box<dyn Iterator<Item = BufferEntry> + Send + '_>;
    /// Every entry in key order, collected (for tests and small buffers).
    fn sorted_entries(&self) -> Vec<BufferEntry> {
        self.sorted_iter().collect()
    }
    /// Heap bytes held: entries, their keys and values, and the index over them.
    fn bytes(&self) -> usize;
    /// Entries held.
    fn len(&self) -> usize;
    /// True when nothing is held.
    fn is_empty(&self) -> bool {
        self.len() == 0
    }
    /// Capacity in heap bytes (one write buffer's share of M_B).
    fn capacity(&self) -> usize;
    /// True once the buffer holds at least its capacity and should be frozen and flushed.
    fn is_full(&self) -> bool {
        self.bytes() >= self.capacity()
    }
}

/// A sorted buffer on a lock-free skiplist. A key's node is never replaced: the skiplist's replace unlinks the
/// old node before it links the new one, and a reader in between would find no version in the buffer and read
/// an older one from disk. A newer version is written into the node's own cell instead.
pub struct SortedBuffer {
    map: SkipMap<Vec<u8>, Mutex<Versioned>>,
    bytes: AtomicUsize,
    capacity: usize,
}

impl SortedBuffer {
    /// An empty buffer of `capacity` bytes.
    pub fn new(capacity: usize) -> Self {
        SortedBuffer {
            map: SkipMap::new(),
            bytes: AtomicUsize::new(0),
            capacity,
        }
    }
}

fn in_range(key: &[u8], start: Bound<&[u8]>, end: Bound<&[u8]>) -> bool {
    let lo = match start {
        Bound::Included(s) => key >= s,
        Bound::Excluded(s) => key > s,
        Bound::Unbounded => true,
    };
    let hi = match end {
        Bound::Included(e) => key <= e,
        Bound::Excluded(e) => key < e,
        Bound::Unbounded => true,
    };
    lo && hi
}

/// The smallest sequence number to keep so that the newest entries, charged `sizes` each, and an index over
/// them (`index(n)` bytes for n entries) fit in `budget` bytes: `u64::MAX` (keep nothing) when not even the
/// newest fits.
fn newest_cutoff(
    mut sizes: Vec<(u64, usize)>,
    budget: usize,
    index: impl Fn(usize) -> usize,
) -> u64 {
    sizes.sort_unstable_by_key(|&(seq, _)| std::cmp::Reverse(seq));
    let mut used = 0usize;
    let mut cutoff = u64::MAX;
    for (n, (seq, size)) in sizes.into_iter().enumerate() {
        used += size;
        if used + index(n + 1) > budget {
            break;
        }
        cutoff = seq;
    }
    cutoff
}

impl SortedBuffer {
    /// Drops the oldest entries (lowest sequence numbers) until the rest fit in `budget` heap bytes. Takes
    /// `&mut self`: only a buffer no reader shares is trimmed.
    pub fn retain_newest(&mut self, budget: usize) {
        if self.bytes() <= budget {
            return;
        }
        let sizes = self
            .map
            .iter()
            .map(|e| {
                let cell = e.value().lock();
                (cell.0, charge(e.key(), &cell.1))
            })
            .collect();
        let cutoff = newest_cutoff(sizes, budget, |_| 0);
        let mut kept = 0;
        for e in self.map.iter() {
            let cell = e.value().lock();
            if cell.0 < cutoff {
                drop(cell);
                e.remove();
            } else {
                kept += charge(e.key(), &cell.1);
            }
        }
        self.bytes.store(kept, Ordering::Relaxed);
    }
}

impl WriteBuffer for SortedBuffer {
    fn insert(&self, key: Vec<u8>, seq: u64, value: Option<Vec<u8>>) {
        let add = charge(&key, &value);
        // a new key gets its node; an existing one (or one another writer inserts meanwhile) has its cell
        // updated in place, never unlinked
        let mut mine = Some((seq, value));
        let e = self
            .map
            .get_or_insert_with(key, || Mutex::new(mine.take().unwrap_or((seq, None))));
        let old = match mine {
            None => None,
            Some((seq, value)) => {
                let mut cell = e.value().lock();
                if cell.0 > seq {
                    return;
                }
                let old = charge(e.key(), &cell.1);
                *cell = (seq, value);
                Some(old)
            }
        };
        self.bytes.fetch_add(add, Ordering::Relaxed);
        if let Some(old) = old {
            self.bytes.fetch_sub(
                old.min(self.bytes.load(Ordering::Relaxed)),
                Ordering::Relaxed,
            );
        }
    }

    fn get(&self, key: &[u8]) -> Option<Versioned> {
        self.map.get(key).map(|e| e.value().lock().clone())
    }

    fn range(&self, start: Bound<&[u8]>, end: Bound<&[u8]>, limit: usize) -> Vec<BufferEntry> {
        if let (Bound::Included(s) | Bound::Excluded(s), Bound::Included(e) | Bound::Excluded(e)) =
            (start, end)
        {
            if s > e {
                return Vec::new();
            }
        }
        let owned = |b: Bound<&[u8]>| match b {
            Bound::Included(k) => Bound::Included(k.to_vec()),
            Bound::Excluded(k) => Bound::Excluded(k.to_vec()),
            Bound::Unbounded => Bound::Unbounded,
        };
        self.map
            .range((owned(start), owned(end)))
            .filter(|e| in_range(e.key(), start, end))
            .take(limit)
            .map(|e| {
                let (seq, v) = e.value().lock().clone();
                (e.key().clone(), seq, v)
            })
            .collect()
    }

    fn sorted_iter(&self) -> Box<dyn Iterator<Item = BufferEntry> + Send + '_> {
        Box::new(self.map.iter().map(|e| {
            let (seq, v) = e.value().lock().clone();
            (e.key().clone(), seq, v)
        }))
    }

    fn bytes(&self) -> usize {
        self.bytes.load(Ordering::Relaxed)
    }

    fn len(&self) -> usize {
        self.map.len()
    }

    fn capacity(&self) -> usize {
        self.capacity
    }
}

/// A hash-indexed log: the in-memory mutable region of a FASTER-like design.
pub struct HashLogBuffer {
    map: RwLock<HashMap<Vec<u8>, Versioned>>,
    /// Heap bytes of the keys and values.
    bytes: AtomicUsize,
    /// Heap bytes of the hash table (it grows by doubling).
    table_bytes: AtomicUsize,
    /// Heap bytes the next new key would add at once by doubling the table (the new table is allocated while
    /// the old one is still held), 0 while the table has room: counted before the doubling happens, so a
    /// buffer never grows past its capacity by a resize.
    growth: AtomicUsize,
    capacity: usize,
}

impl HashLogBuffer {
    /// An empty buffer of `capacity` bytes.
    pub fn new(capacity: usize) -> Self {
        HashLogBuffer {
            map: RwLock::new(HashMap::new()),
            bytes: AtomicUsize::new(0),
            table_bytes: AtomicUsize::new(0),
            growth: AtomicUsize::new(table_bytes(1)),
            capacity,
        }
    }
}

/// Heap bytes of the hash table when the map reports `capacity` (the cost model counts a flush's entries with
/// the same function).
fn table_bytes(capacity: usize) -> usize {
    cosine_design::shape::hash_log_table_bytes(capacity)
}

impl HashLogBuffer {
    /// Drops the oldest entries (lowest sequence numbers) until the rest, and the table shrunk to them, fit in
    /// `budget` heap bytes. Takes `&mut self`: only a buffer no reader shares is trimmed.
    pub fn retain_newest(&mut self, budget: usize) {
        if self.bytes() <= budget {
            return;
        }
        let map = self.map.get_mut();
        let sizes: Vec<(u64, usize)> = map
            .iter()
            .map(|(k, v)| (v.0, payload_bytes(k, &v.1)))
            .collect();
        // the table, shrunk to what is kept, comes out of the budget too
        let cutoff = newest_cutoff(sizes, budget, table_bytes);
        map.retain(|_, v| v.0 >= cutoff);
        map.shrink_to_fit();
        let kept = map.iter().map(|(k, v)| payload_bytes(k, &v.1)).sum();
        let cap = map.capacity();
        self.bytes.store(kept, Ordering::Relaxed);
        self.table_bytes.store(table_bytes(cap), Ordering::Relaxed);
    }
}

impl WriteBuffer for HashLogBuffer {
    fn insert(&self, key: Vec<u8>, seq: u64, value: Option<Vec<u8>>) {
        let add = payload_bytes(&key, &value);
        let mut map = self.map.write();
        let old = match map.get(&key) {
            Some(v) if v.0 > seq => return,
            Some(v) => Some(payload_bytes(&key, &v.1)),
            None => None,
        };
        map.insert(key, (seq, value));
        let cap = map.capacity();
        self.table_bytes.store(table_bytes(cap), Ordering::Relaxed);
        let growth = if map.len() >= cap {
            table_bytes(cap * 2 + 1)
        } else {
            0
        };
        self.growth.store(growth, Ordering::Relaxed);
        self.bytes.fetch_add(add, Ordering::Relaxed);
        if let Some(old) = old {
            self.bytes.fetch_sub(
                old.min(self.bytes.load(Ordering::Relaxed)),
                Ordering::Relaxed,
            );
        }
    }

    fn get(&self, key: &[u8]) -> Option<Versioned> {
        self.map.read().get(key).cloned()
    }

    fn range(&self, start: Bound<&[u8]>, end: Bound<&[u8]>, limit: usize) -> Vec<BufferEntry> {
        // unordered: select the `limit` smallest keys in range first, then copy only those
        let map = self.map.read();
        let mut keys: Vec<&Vec<u8>> = map.keys().filter(|k| in_range(k, start, end)).collect();
        if keys.len() > limit {
            keys.select_nth_unstable(limit);
            keys.truncate(limit);
        }
        keys.sort_unstable();
        keys.into_iter()
            .map(|k| {
                let (s, v) = &map[k];
                (k.clone(), *s, v.clone())
            })
            .collect()
    }

    fn sorted_iter(&self) -> Box<dyn Iterator<Item = BufferEntry> + Send + '_> {
        // the keys in order (copies of the keys only), then each entry looked up as the flush asks for it
        let mut keys: Vec<Vec<u8>> = self.map.read().keys().cloned().collect();
        keys.sort_unstable();
        Box::new(keys.into_iter().filter_map(move |k| {
            let (seq, v) = self.map.read().get(&k).cloned()?;
            Some((k, seq, v))
        }))
    }

    fn bytes(&self) -> usize {
        self.bytes.load(Ordering::Relaxed) + self.table_bytes.load(Ordering::Relaxed)
    }

    fn len(&self) -> usize {
        self.map.read().len()
    }

    fn capacity(&self) -> usize {
        self.capacity
    }

    fn is_full(&self) -> bool {
        self.bytes() + self.growth.load(Ordering::Relaxed) >= self.capacity
    }
}

/// Which write buffer to build: the part a design picks ([`BufferKind::build`] is the one place a kind becomes
/// a buffer). A new kind (FASTER's hybrid log, say) is a variant here, one in [`Buffer`], and the engine's
/// factory (`cosine_engine::Parts::of`) that maps design values to it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum BufferKind {
    /// A sorted skiplist ([`SortedBuffer`]): ordered scans, O(log n) inserts.
    Sorted,
    /// A hash-indexed log ([`HashLogBuffer`]): O(1) inserts and lookups, sorted only when scanned or flushed.
    HashLog,
}

impl BufferKind {
    /// An empty buffer of this kind that reports full at `capacity` heap bytes.
    pub fn build(self, capacity: usize) -> Buffer {
        match self {
            BufferKind::Sorted => Buffer::Sorted(SortedBuffer::new(capacity)),
            BufferKind::HashLog => Buffer::HashLog(HashLogBuffer::new(capacity)),
        }
    }
}

/// The buffer a design asks for (enum dispatch: no virtual call on the lookup path).
#[allow(clippy::large_enum_variant)] // one buffer per engine; boxing would add an indirection to every access
pub enum Buffer {
    /// Sorted skiplist.
    Sorted(SortedBuffer),
    /// Hash-indexed log.
    HashLog(HashLogBuffer),
}

impl Buffer {
    /// Drops the oldest entries (lowest sequence numbers) until what is left fits in `budget` heap bytes: how
    /// the hybrid log's read-only region gives memory back to the mutable region. `&mut self`: the caller
    /// trims only a buffer no reader or snapshot shares.
    pub fn retain_newest(&mut self, budget: usize) {
        match self {
            Buffer::Sorted(b) => b.retain_newest(budget),
            Buffer::HashLog(b) => b.retain_newest(budget),
        }
    }
}

macro_rules! dispatch {
    ($self:ident, $b:ident => $e:expr) => {
        match $self {
            Buffer::Sorted($b) => $e,
            Buffer::HashLog($b) => $e,
        }
    };
}

impl WriteBuffer for Buffer {
    fn insert(&self, key: Vec<u8>, seq: u64, value: Option<Vec<u8>>) {
        dispatch!(self, b => b.insert(key, seq, value))
    }
    fn get(&self, key: &[u8]) -> Option<Versioned> {
        dispatch!(self, b => b.get(key))
    }
    fn range(&self, start: Bound<&[u8]>, end: Bound<&[u8]>, limit: usize) -> Vec<BufferEntry> {
        dispatch!(self, b => b.range(start, end, limit))
    }
    fn sorted_iter(&self) -> Box<dyn Iterator<Item = BufferEntry> + Send + '_> {
        dispatch!(self, b => b.sorted_iter())
    }
    fn bytes(&self) -> usize {
        dispatch!(self, b => b.bytes())
    }
    fn len(&self) -> usize {
        dispatch!(self, b => b.len())
    }
    fn capacity(&self) -> usize {
        dispatch!(self, b => b.capacity())
    }
    fn is_full(&self) -> bool {
        dispatch!(self, b => b.is_full())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn exercise(b: &dyn WriteBuffer) {
        b.insert(b"b".to_vec(), 1, Some(b"1".to_vec()));
        b.insert(b"a".to_vec(), 2, Some(b"2".to_vec()));
        b.insert(b"c".to_vec(), 3, None);
        b.insert(b"b".to_vec(), 4, Some(b"3".to_vec()));
        assert_eq!(b.len(), 3);
        assert_eq!(b.get(b"b"), Some((4, Some(b"3".to_vec()))));
        // an older version arriving late never replaces a newer one
        b.insert(b"b".to_vec(), 2, Some(b"old".to_vec()));
        assert_eq!(b.get(b"b"), Some((4, Some(b"3".to_vec()))));
        assert_eq!(b.get(b"c"), Some((3, None)));
        assert_eq!(b.get(b"z"), None);
        let keys: Vec<Vec<u8>> = b.sorted_entries().into_iter().map(|e| e.0).collect();
        assert_eq!(keys, vec![b"a".to_vec(), b"b".to_vec(), b"c".to_vec()]);
        let r = b.range(Bound::Excluded(b"a"), Bound::Included(b"b"), usize::MAX);
        assert_eq!(r.len(), 1);
        assert_eq!(r[0].0, b"b".to_vec());
        assert!(b
            .range(Bound::Included(b"c"), Bound::Excluded(b"a"), usize::MAX)
            .is_empty());
        // a limit keeps the smallest keys, in order
        let first: Vec<Vec<u8>> = b
            .range(Bound::Unbounded, Bound::Unbounded, 2)
            .into_iter()
            .map(|e| e.0)
            .collect();
        assert_eq!(first, vec![b"a".to_vec(), b"b".to_vec()]);
        assert!(b.range(Bound::Unbounded, Bound::Unbounded, 0).is_empty());
    }

    #[test]
    fn sorted_buffer() {
        let b = SortedBuffer::new(1 << 20);
        exercise(&b);
        // replaced entries are not double-charged
        assert_eq!(
            b.bytes(),
            charge(b"a", &Some(b"2".to_vec())) * 2 + charge(b"c", &None)
        );
    }

    #[test]
    fn allocations_are_charged_as_the_heap_rounds_them() {
        assert_eq!(alloc_bytes(0), 0);
        assert_eq!(alloc_bytes(1), 32);
        assert_eq!(alloc_bytes(24), 32);
        assert_eq!(alloc_bytes(25), 48);
        assert_eq!(alloc_bytes(1000), 1008);
    }

    #[test]
    fn the_node_and_the_charge_are_what_the_cost_model_counts() {
        assert_eq!(
            SKIPLIST_NODE_BYTES,
            cosine_design::shape::SORTED_BUFFER_NODE_BYTES
        );
        assert_eq!(
            charge(&[7; 23], &Some(vec![1; 1000])),
            cosine_design::shape::sorted_buffer_entry_bytes(23, 1000)
        );
        assert!(table_bytes(0) == 0 && table_bytes(3) < table_bytes(7));
        assert_eq!(table_bytes(14), table_bytes(13));
        assert_eq!(
            std::mem::size_of::<(Vec<u8>, Versioned)>(),
            cosine_design::shape::HASH_LOG_SLOT_BYTES
        );
    }

    #[test]
    fn a_hash_log_flushes_the_entries_the_cost_model_counts() {
        // distinct keys until full, at capacities across the table's doublings
        for (cap, value) in [
            (64 << 10, 1000),
            (314_572, 1000),
            (262_144, 100),
            (1 << 20, 1000),
            (5 << 20, 24),
        ] {
            let b = HashLogBuffer::new(cap);
            let mut i = 0u64;
            while !b.is_full() {
                // 23-byte keys, as YCSB's
                let key = format!("user{i:019}").into_bytes();
                b.insert(key, i, Some(vec![1; value]));
                i += 1;
            }
            assert_eq!(
                b.len(),
                cosine_design::shape::hash_log_flush_entries(cap, 23, value),
                "capacity {cap}, {value}-byte values"
            );
        }
    }

    #[test]
    fn hash_log_buffer() {
        exercise(&HashLogBuffer::new(1 << 20));
    }

    #[test]
    fn a_hash_log_is_full_before_its_table_would_double_past_capacity() {
        let cap = 64 << 10;
        let b = HashLogBuffer::new(cap);
        let mut i = 0u32;
        while !b.is_full() {
            b.insert(i.to_le_bytes().to_vec(), i as u64, Some(vec![1; 8]));
            i += 1;
        }
        // full, and what it holds stayed within its capacity plus the last entry
        assert!(b.bytes() <= cap + 64, "{} of {cap}", b.bytes());
    }

    #[test]
    fn retaining_the_newest_keeps_the_highest_sequence_numbers_within_the_budget() {
        for kind in [BufferKind::Sorted, BufferKind::HashLog] {
            let mut b = kind.build(1 << 20);
            for i in 0..1000u32 {
                // keys in an order unrelated to their sequence numbers
                let key = (i.wrapping_mul(2_654_435_761)).to_be_bytes().to_vec();
                b.insert(key, u64::from(i), Some(vec![7; 40]));
            }
            // an update makes an old key new
            b.insert(0u32.to_be_bytes().to_vec(), 5000, Some(vec![8; 40]));
            let before = b.bytes();
            b.retain_newest(before / 4);
            assert!(
                b.bytes() <= before / 4,
                "{kind:?}: {} > {}",
                b.bytes(),
                before / 4
            );
            assert!(b.len() > 100, "{kind:?} kept {}", b.len());
            let kept: Vec<u64> = b.sorted_entries().iter().map(|e| e.1).collect();
            let oldest_kept = kept.iter().min().copied().unwrap_or(0);
            // every entry newer than the oldest kept one is kept (the seqs oldest..1000 and the update's)
            assert_eq!(kept.len() as u64, 1000 - oldest_kept + 1);
            assert_eq!(b.get(&0u32.to_be_bytes()), Some((5000, Some(vec![8; 40]))));
            // within budget already: nothing changes
            let len = b.len();
            b.retain_newest(usize::MAX);
            assert_eq!(b.len(), len);
            b.retain_newest(0);
            assert!(b.is_empty(), "{kind:?}");
        }
    }

    #[test]
    fn fills_up() {
        let b = Buffer::Sorted(SortedBuffer::new(100));
        assert!(!b.is_full());
        for i in 0..10u8 {
            b.insert(vec![i], i as u64, Some(vec![0; 8]));
        }
        assert!(b.is_full());
    }
}

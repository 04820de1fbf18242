//! The entry cache, M_BC of a design (MODEL.md §2.1, the level −1 the distribution-aware model allows for and
//! the paper's designs leave empty): the values of recently read keys in memory, so that a skewed read
//! workload's hot keys cost no I/O. Lookups fill it; a write to a key drops the key's entry.
//!
//! Eviction is quick_cache's (a CLOCK-Pro-like policy over weighted entries); each entry weighs its key, its
//! value and [`CACHE_ENTRY_OVERHEAD_BYTES`], and the weights stay within the design's M_BC.
//!
//! A lookup that misses may race a write to the same key: it reads the old value from the runs while the write
//! lands in the write buffer. So that an old value is never cached once a lookup could have seen the new one,
//! a write brackets its buffer insert with [`EntryCache::begin_write`] and [`EntryCache::end_write`]: each bumps
//! the epoch of the key's stripe and drops the key's entry, and between the two the stripe counts the write as
//! in flight. A lookup takes a [`Ticket`] (the stripe's epoch) before it reads, and [`EntryCache::fill`]
//! caches the value only if the epoch is unchanged and no write to the stripe is in flight, all under the
//! stripe's lock. So a fill either finished before the write began (and `begin_write` drops it) or saw no
//! write at all between its ticket and its fill.

use cosine_design::CACHE_ENTRY_OVERHEAD_BYTES;
use parking_lot::Mutex;
use quick_cache::sync::Cache;
use quick_cache::Weighter;
use std::hash::BuildHasher;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

/// Stripes of epochs: a write to one stripe fails only the fills of lookups in that stripe that raced it.
const STRIPES: usize = 64;

/// Weighs an entry as the memory it holds.
#[derive(Clone, Copy, Debug, Default)]
struct ByBytes;

impl Weighter<Vec<u8>, Arc<[u8]>> for ByBytes {
    fn weight(&self, key: &Vec<u8>, value: &Arc<[u8]>) -> u64 {
        entry_weight(key.len(), value.len())
    }
}

/// What one cached entry counts against M_BC.
pub fn entry_weight(key_bytes: usize, value_bytes: usize) -> u64 {
    key_bytes as u64 + value_bytes as u64 + CACHE_ENTRY_OVERHEAD_BYTES
}

/// One stripe's write epoch and the writes to its keys in flight.
#[derive(Debug, Default)]
struct Stripe {
    epoch: u64,
    writing: u32,
}

/// The stripe epoch a lookup saw before it read the key from the buffers and runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Ticket {
    stripe: usize,
    epoch: u64,
}

/// Hits, misses and fills since the cache was made.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CacheStats {
    /// Lookups the cache answered.
    pub hits: u64,
    /// Lookups it did not.
    pub misses: u64,
    /// Values cached after a miss.
    pub fills: u64,
    /// Fills refused because a write to the stripe raced the lookup.
    pub refused: u64,
}

/// A bounded cache of key → value for point lookups.
pub struct EntryCache {
    map: Cache<Vec<u8>, Arc<[u8]>, ByBytes>,
    stripes: Box<[Mutex<Stripe>]>,
    capacity: u64,
    hits: AtomicU64,
    misses: AtomicU64,
    fills: AtomicU64,
    refused: AtomicU64,
}

impl std::fmt::Debug for EntryCache {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("EntryCache")
            .field("capacity", &self.capacity)
            .field("bytes", &self.bytes())
            .field("entries", &self.len())
            .finish()
    }
}

fn stripe_of(key: &[u8]) -> usize {
    let h = std::hash::BuildHasherDefault::<std::collections::hash_map::DefaultHasher>::default()
        .hash_one(key);
    (h % STRIPES as u64) as usize
}

impl EntryCache {
    /// A cache holding at most `capacity_bytes` of entries (keys, values and their overhead); None when that
    /// is too small for any entry.
    pub fn new(capacity_bytes: u64) -> Option<Self> {
        if capacity_bytes <= CACHE_ENTRY_OVERHEAD_BYTES {
            return None;
        }
        // sized for entries of about 1 KiB; the table grows when they are smaller. quick_cache splits the
        // weight among its shards (fewer for a small cache, so each holds at least 32 such entries): a value
        // heavier than one shard's share is not cached at all
        let items = (capacity_bytes / 1024).clamp(16, 1 << 24) as usize;
        Some(EntryCache {
            map: Cache::with_weighter(items, capacity_bytes, ByBytes),
            stripes: (0..STRIPES)
                .map(|_| Mutex::new(Stripe::default()))
                .collect(),
            capacity: capacity_bytes,
            hits: AtomicU64::new(0),
            misses: AtomicU64::new(0),
            fills: AtomicU64::new(0),
            refused: AtomicU64::new(0),
        })
    }

    /// The cached value of `key`, or on a miss the ticket to fill it with once the lookup has read it.
    pub fn lookup(&self, key: &[u8]) -> Result<Vec<u8>, Ticket> {
        if let Some(v) = self.map.get(key) {
            self.hits.fetch_add(1, Ordering::Relaxed);
            return Ok(v.to_vec());
        }
        self.misses.fetch_add(1, Ordering::Relaxed);
        let stripe = stripe_of(key);
        let epoch = self.stripes[stripe].lock().epoch;
        Err(Ticket { stripe, epoch })
    }

    /// Caches `value` for `key`, read after `ticket` was taken, unless a write to the key's stripe began
    /// since or is still in flight (the value may be older than that write).
    pub fn fill(&self, key: &[u8], value: &[u8], ticket: Ticket) {
        if entry_weight(key.len(), value.len()) > self.capacity {
            return;
        }
        let stripe = self.stripes[ticket.stripe].lock();
        if stripe.epoch != ticket.epoch || stripe.writing > 0 {
            self.refused.fetch_add(1, Ordering::Relaxed);
            return;
        }
        self.map.insert(key.to_vec(), Arc::from(value));
        self.fills.fetch_add(1, Ordering::Relaxed);
    }

    /// Call before a write to `key` becomes visible to lookups: drops the key's entry and refuses every fill
    /// in its stripe until the matching [`EntryCache::end_write`].
    pub fn begin_write(&self, key: &[u8]) {
        let mut stripe = self.stripes[stripe_of(key)].lock();
        stripe.epoch += 1;
        stripe.writing += 1;
        self.map.remove(key);
    }

    /// Call once the write to `key` that [`EntryCache::begin_write`] announced is visible to lookups: drops
    /// anything cached for the key meanwhile and refuses the fills of lookups that began before.
    pub fn end_write(&self, key: &[u8]) {
        let mut stripe = self.stripes[stripe_of(key)].lock();
        stripe.epoch += 1;
        stripe.writing = stripe
            .writing
            .checked_sub(1)
            .expect("end_write without begin_write");
        self.map.remove(key);
    }

    /// Drops `key`'s entry and refuses the fills of lookups in its stripe that began before (a write that
    /// became visible in one step: [`EntryCache::begin_write`] and [`EntryCache::end_write`] at once).
    pub fn invalidate(&self, key: &[u8]) {
        self.begin_write(key);
        self.end_write(key);
    }

    /// Bytes the cached entries weigh (keys, values and overhead).
    pub fn bytes(&self) -> u64 {
        self.map.weight()
    }

    /// Entries cached.
    pub fn len(&self) -> usize {
        self.map.len()
    }

    /// Whether nothing is cached.
    pub fn is_empty(&self) -> bool {
        self.map.len() == 0
    }

    /// M_BC: the most the entries may weigh.
    pub fn capacity(&self) -> u64 {
        self.capacity
    }

    /// Hits, misses and fills so far.
    pub fn stats(&self) -> CacheStats {
        CacheStats {
            hits: self.hits.load(Ordering::Relaxed),
            misses: self.misses.load(Ordering::Relaxed),
            fills: self.fills.load(Ordering::Relaxed),
            refused: self.refused.load(Ordering::Relaxed),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use std::collections::HashMap;

    #[test]
    fn a_filled_value_is_served_until_its_key_is_written() {
        let c = EntryCache::new(1 << 20).unwrap();
        let t = c.lookup(b"k").unwrap_err();
        c.fill(b"k", b"v1", t);
        assert_eq!(c.lookup(b"k"), Ok(b"v1".to_vec()));
        c.invalidate(b"k");
        assert!(c.lookup(b"k").is_err());
        assert_eq!(c.stats().hits, 1);
        assert_eq!(c.stats().misses, 2);
    }

    #[test]
    fn a_lookup_that_raced_a_write_does_not_cache_its_old_value() {
        let c = EntryCache::new(1 << 20).unwrap();
        let t = c.lookup(b"k").unwrap_err();
        // the lookup read the old value from the runs; meanwhile a write landed and invalidated the key
        c.invalidate(b"k");
        c.fill(b"k", b"old", t);
        assert!(c.lookup(b"k").is_err());
        assert_eq!(c.stats().refused, 1);
    }

    #[test]
    fn a_lookup_that_fills_while_a_write_is_in_flight_is_refused() {
        // the interleaving a bare invalidate-after-insert allowed: a lookup takes its ticket and reads the
        // old value from the runs; the write lands in the buffer (other lookups now see it); the lookup
        // fills; only then would the write have invalidated, leaving a window where a hit is stale
        let c = EntryCache::new(1 << 20).unwrap();
        let t = c.lookup(b"k").unwrap_err();
        c.begin_write(b"k");
        // ...the write is in the buffer now...
        c.fill(b"k", b"old", t);
        assert!(
            c.lookup(b"k").is_err(),
            "a stale value was served while the write was visible"
        );
        // a lookup that starts while the write is in flight reads the new value, but may not cache it
        // either: the write could still be on its way into the buffer when it read
        let t2 = c.lookup(b"k").unwrap_err();
        c.fill(b"k", b"new", t2);
        assert!(c.lookup(b"k").is_err());
        c.end_write(b"k");
        let t3 = c.lookup(b"k").unwrap_err();
        c.fill(b"k", b"new", t3);
        assert_eq!(c.lookup(b"k"), Ok(b"new".to_vec()));
        assert_eq!(c.stats().refused, 2);
    }

    #[test]
    fn entries_stay_within_the_capacity() {
        let cap = 64 << 10;
        let c = EntryCache::new(cap).unwrap();
        for i in 0..10_000u32 {
            let k = i.to_be_bytes();
            let t = c.lookup(&k).unwrap_err();
            c.fill(&k, &[7u8; 100], t);
        }
        assert!(c.bytes() <= cap, "{} > {cap}", c.bytes());
        assert!(c.len() > 100, "{} entries", c.len());
        assert!(EntryCache::new(CACHE_ENTRY_OVERHEAD_BYTES).is_none());
    }

    #[test]
    fn a_value_larger_than_the_cache_is_not_cached() {
        let c = EntryCache::new(1024).unwrap();
        let t = c.lookup(b"k").unwrap_err();
        c.fill(b"k", &[0u8; 4096], t);
        assert!(c.is_empty());
    }

    proptest! {
        /// Against a map of the truth: whatever interleaving of lookups (fill after read), writes
        /// (invalidate after the write) and races (a write between a lookup's ticket and its fill), a hit
        /// returns the key's latest value.
        #[test]
        fn hits_are_never_stale(ops in prop::collection::vec((0u8..3, 0u8..8, any::<u8>()), 1..300)) {
            let c = EntryCache::new(4096).unwrap();
            let mut truth: HashMap<u8, u8> = HashMap::new();
            let mut pending: Option<(u8, u8, Ticket)> = None;
            for (op, k, v) in ops {
                match op {
                    0 => {
                        match c.lookup(&[k]) {
                            Ok(hit) => prop_assert_eq!(Some(&hit[0]), truth.get(&k)),
                            Err(t) => {
                                if let Some(&val) = truth.get(&k) {
                                    // finish the previous racing lookup first, then park this one
                                    if let Some((pk, pv, pt)) = pending.take() {
                                        c.fill(&[pk], &[pv], pt);
                                    }
                                    pending = Some((k, val, t));
                                }
                            }
                        }
                    }
                    1 => {
                        truth.insert(k, v);
                        c.invalidate(&[k]);
                    }
                    _ => {
                        if let Some((pk, pv, pt)) = pending.take() {
                            c.fill(&[pk], &[pv], pt);
                        }
                    }
                }
            }
        }
    }
}

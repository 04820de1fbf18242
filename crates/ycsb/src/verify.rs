//! Verified results: every value the harness writes says which record and which version of it it is, and every
//! read and scan is checked against what the harness knows was acknowledged.
//!
//! A value of record `n`, version `v` is `n` (8 bytes, little-endian), `v` (8 bytes) and filler bytes drawn
//! from a generator seeded by (n, v), so a reader can rebuild the whole value from its first 16 bytes. The
//! [`Ledger`] keeps, per record, the highest version acknowledged (4 bytes: the harness's own memory counts in
//! the process's peak). Writes to one record are serialized by the harness (a striped lock around choosing the
//! version and writing it), so the store's order of a record's versions is the ledger's, and at most one
//! version beyond the acknowledged one is ever in flight. Then:
//! - a read of record `n` must return a value of record `n` whose bytes are intact and whose version lies
//!   between the version acknowledged before the read began and the one in flight when it returned; it may
//!   miss only if no write of `n` had been acknowledged before it began;
//! - a scan must return at most the count asked for, keys in strictly increasing order from the start key,
//!   every value intact and belonging to its key, at a version written; it may return fewer only if no
//!   acknowledged key lies past its last key (or its start key, when it returns nothing); and it may skip no
//!   record acknowledged before its phase began ([`KeyOrder`]: between its start key and its last key it returns
//!   every one of them). Records inserted during the phase are checked for order and contents, not for being
//!   skipped, and a scan is not checked for a stale version of a record updated during its phase (YCSB's one
//!   scanning workload, E, writes only new records, each at one version);
//! - a read-modify-write checks the value it read as a read does.

use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Mutex, MutexGuard, OnceLock, RwLock};

/// Bytes of a value's header: record number and version.
pub const HEADER_BYTES: usize = 16;

const CHUNK: usize = 1 << 16;
/// Chunks reached without a lock (268 M records); records beyond them take a locked overflow.
const DIRECT_CHUNKS: usize = 4096;
const STRIPES: usize = 4096;

/// Per-record version acknowledged (0: none yet).
#[derive(Default)]
struct Slot {
    acked: AtomicU32,
}

/// What the harness knows it wrote: per record the version acknowledged, the largest key
/// acknowledged, and the locks that serialize writes to one record.
pub struct Ledger {
    /// Every client thread reads a slot on every operation: the first chunks are set once and then read
    /// without a lock (a shared read lock's counter bounced between the cores: 7% of a YCSB-E run's CPU).
    chunks: Box<[OnceLock<Box<[Slot]>>]>,
    overflow: RwLock<Vec<Box<[Slot]>>>,
    stripes: Vec<Mutex<()>>,
    max_key: Mutex<Vec<u8>>,
}

impl Default for Ledger {
    fn default() -> Self {
        Ledger {
            chunks: (0..DIRECT_CHUNKS).map(|_| OnceLock::new()).collect(),
            overflow: RwLock::new(Vec::new()),
            stripes: (0..STRIPES).map(|_| Mutex::new(())).collect(),
            max_key: Mutex::new(Vec::new()),
        }
    }
}

fn splitmix(x: &mut u64) -> u64 {
    *x = x.wrapping_add(0x9E37_79B9_7F4A_7C15);
    let mut z = *x;
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// The body of record `n`'s value at `version`: printable letters, as YCSB's values are, 8 from each number of a
/// splitmix stream seeded by the two (a value's length is checked through its header: [`version_word`]).
fn fill(n: u64, version: u64, out: &mut [u8]) {
    let mut state = seed(n, version);
    fill_from(&mut state, out);
}

/// Fills `out` from the stream at `state` (8 letters a number; a last part-number takes its first bytes) and
/// leaves `state` where the stream goes on, so that consecutive calls on 8-byte multiples write what one call
/// on the whole would. Two passes, the stream's bytes and then each byte mapped to a letter, so that the
/// second vectorizes: the harness fills or checks a value on every operation, and its cost is taken from the
/// engines it measures (0.45 µs a 1,000-byte value here against 0.8-1.7 µs mapping 8 bytes at a time).
fn fill_from(state: &mut u64, out: &mut [u8]) {
    let mut chunks = out.chunks_exact_mut(8);
    for chunk in &mut chunks {
        chunk.copy_from_slice(&splitmix(state).to_le_bytes());
    }
    let rest = chunks.into_remainder();
    if !rest.is_empty() {
        let r = splitmix(state).to_le_bytes();
        let len = rest.len();
        rest.copy_from_slice(&r[..len]);
    }
    for b in out.iter_mut() {
        *b = letter(*b);
    }
}

/// The stream's seed for record `n` at `version`.
fn seed(n: u64, version: u64) -> u64 {
    n.wrapping_mul(0xD6E8_FEB8_6659_FD93) ^ version
}

#[inline(always)]
fn letter(b: u8) -> u8 {
    b'a' + b % 26
}

/// Bytes of the expected body [`filled`] builds on the stack at a time (a multiple of 8).
const CHECK_PAGE: usize = 256;

/// Whether `body` is what [`fill`] writes for record `n` at `version`: the expected bytes are built a page at a
/// time on the stack and compared page by page (4× faster than comparing 8 bytes at a time as each is made:
/// 0.5 against 1.9 µs a 1,000-byte value).
fn filled(n: u64, version: u64, body: &[u8]) -> bool {
    let mut state = seed(n, version);
    let mut want = [0u8; CHECK_PAGE];
    body.chunks(CHECK_PAGE).all(|page| {
        let want = &mut want[..page.len()];
        fill_from(&mut state, want);
        page == want
    })
}

/// Bits of the header's version word below the value's length (a version is far below 2^40).
const LENGTH_SHIFT: u32 = 40;

/// The header's version word of a `len`-byte value: the version with the length folded into its top bits, so
/// that a value cut short or grown (its letters an intact prefix or not) decodes to a version never written.
fn version_word(version: u64, len: usize) -> u64 {
    version ^ ((len as u64) << LENGTH_SHIFT)
}

/// The value of record `n` at `version`, `len` bytes long (at least [`HEADER_BYTES`]).
pub fn make_value(n: u64, version: u64, len: usize) -> Vec<u8> {
    let mut v = vec![0u8; len.max(HEADER_BYTES)];
    let word = version_word(version, v.len());
    v[..8].copy_from_slice(&n.to_le_bytes());
    v[8..16].copy_from_slice(&word.to_le_bytes());
    fill(n, version, &mut v[HEADER_BYTES..]);
    v
}

/// Decodes and checks a value: its record number and version, or what is wrong with it.
pub fn check_value(value: &[u8]) -> Result<(u64, u64), String> {
    if value.len() < HEADER_BYTES {
        return Err(format!("a value of {} bytes has no header", value.len()));
    }
    let n = u64::from_le_bytes(value[..8].try_into().unwrap_or_default());
    let word = u64::from_le_bytes(value[8..16].try_into().unwrap_or_default());
    let version = version_word(word, value.len());
    if version >> LENGTH_SHIFT != 0 {
        return Err(format!(
            "record {n}: a value of {} bytes whose header says another length",
            value.len()
        ));
    }
    if !filled(n, version, &value[HEADER_BYTES..]) {
        return Err(format!(
            "the bytes of record {n} version {version} are damaged"
        ));
    }
    Ok((n, version))
}

/// The records acknowledged before a phase began, in the order of their keys: a scan between two keys must
/// return every one of them that lies there (YCSB never deletes). Record numbers as 4 bytes each (2.4 MB for
/// 600,000 records, in the harness's own memory and so in every engine's peak alike), sorted in place by
/// their keys without a second copy, before the phase's clock starts.
pub struct KeyOrder {
    /// Record numbers below `bound` that were acknowledged, by key.
    by_key: Vec<u32>,
    /// Every record below it was looked at.
    bound: u64,
    /// Records below `bound` never acknowledged (a load's failed write), sorted.
    missing: Vec<u32>,
}

impl KeyOrder {
    /// The records below `bound` that `ledger` holds as acknowledged, ordered by `key_of`; `None` when record
    /// numbers do not fit in 4 bytes.
    pub fn new(ledger: &Ledger, bound: u64, key_of: impl Fn(u64) -> Vec<u8>) -> Option<KeyOrder> {
        let top = u32::try_from(bound).ok()?;
        let (mut by_key, mut missing) = (Vec::with_capacity(top as usize), Vec::new());
        for n in 0..top {
            if ledger.acknowledged(n as u64) > 0 {
                by_key.push(n);
            } else {
                missing.push(n);
            }
        }
        by_key.sort_unstable_by_key(|&n| key_of(n as u64));
        Some(KeyOrder {
            by_key,
            bound,
            missing,
        })
    }

    /// Whether record `n` is among them.
    pub fn holds(&self, n: u64) -> bool {
        n < self.bound && u32::try_from(n).is_ok_and(|n| self.missing.binary_search(&n).is_err())
    }

    /// How many of them have keys from `from` to `to`, both included.
    pub fn between(&self, from: &[u8], to: &[u8], key_of: impl Fn(u64) -> Vec<u8>) -> usize {
        let lo = self
            .by_key
            .partition_point(|&n| key_of(n as u64).as_slice() < from);
        let hi = self
            .by_key
            .partition_point(|&n| key_of(n as u64).as_slice() <= to);
        hi.saturating_sub(lo)
    }
}

impl Ledger {
    fn with_slot<T>(&self, n: u64, f: impl FnOnce(&Slot) -> T) -> T {
        let (c, i) = ((n as usize) / CHUNK, (n as usize) % CHUNK);
        let new_chunk = || (0..CHUNK).map(|_| Slot::default()).collect::<Box<[Slot]>>();
        if let Some(chunk) = self.chunks.get(c) {
            return f(&chunk.get_or_init(new_chunk)[i]);
        }
        let c = c - DIRECT_CHUNKS;
        {
            let chunks = self.overflow.read().unwrap_or_else(|p| p.into_inner());
            if let Some(chunk) = chunks.get(c) {
                return f(&chunk[i]);
            }
        }
        let mut chunks = self.overflow.write().unwrap_or_else(|p| p.into_inner());
        while chunks.len() <= c {
            chunks.push(new_chunk());
        }
        f(&chunks[c][i])
    }

    /// Locks record `n` against other writes by the harness (held around choosing a version and writing it).
    pub fn lock(&self, n: u64) -> MutexGuard<'_, ()> {
        self.stripes[(n as usize) % STRIPES]
            .lock()
            .unwrap_or_else(|p| p.into_inner())
    }

    /// The next version of record `n`: one past the acknowledged one (call under [`Ledger::lock`]; a write
    /// that failed leaves its version to the next, which writes the same bytes).
    pub fn issue(&self, n: u64) -> u64 {
        self.acknowledged(n) + 1
    }

    /// Records that the store acknowledged version `version` of record `n`, whose key is `key`.
    pub fn acknowledge(&self, n: u64, version: u64, key: &[u8]) {
        let first = self.with_slot(n, |s| {
            s.acked.fetch_max(version as u32, Ordering::SeqCst) == 0
        });
        if first {
            let mut m = self.max_key.lock().unwrap_or_else(|p| p.into_inner());
            if key > m.as_slice() {
                *m = key.to_vec();
            }
        }
    }

    /// The version of record `n` acknowledged so far (0: none).
    pub fn acknowledged(&self, n: u64) -> u64 {
        self.with_slot(n, |s| s.acked.load(Ordering::SeqCst) as u64)
    }

    /// The highest version of record `n` that may exist: the acknowledged one, or the one in flight.
    fn ceiling(&self, n: u64) -> u64 {
        self.acknowledged(n) + 1
    }

    /// The largest key acknowledged so far.
    pub fn max_key(&self) -> Vec<u8> {
        self.max_key
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
    }

    /// Checks what a read of record `n` returned; `floor` is [`Ledger::acknowledged`] taken before the read.
    pub fn check_read(&self, n: u64, floor: u64, got: Option<&[u8]>) -> Result<(), String> {
        let Some(value) = got else {
            return if floor > 0 {
                Err(format!(
                    "record {n}: version {floor} was acknowledged, the read found nothing"
                ))
            } else {
                Ok(())
            };
        };
        let (m, version) = check_value(value)?;
        if m != n {
            return Err(format!("record {n}: the read returned record {m}'s value"));
        }
        let ceiling = self.ceiling(n);
        if version < floor {
            return Err(format!(
                "record {n}: stale version {version}, {floor} was acknowledged before the read"
            ));
        }
        if version > ceiling {
            return Err(format!(
                "record {n}: version {version} was never written (highest possible {ceiling})"
            ));
        }
        Ok(())
    }

    /// Checks a scan of at most `count` entries from `start`; `max_key` is [`Ledger::max_key`] taken before
    /// the scan, `key_of(n)` the key of record `n`, `order` the records acknowledged before the phase (then
    /// none of them between `start` and the last key returned may be missing).
    pub fn check_scan(
        &self,
        start: &[u8],
        count: usize,
        max_key: &[u8],
        entries: &[(Vec<u8>, Vec<u8>)],
        key_of: impl Fn(u64) -> Vec<u8>,
        order: Option<&KeyOrder>,
    ) -> Result<(), String> {
        if entries.len() > count {
            return Err(format!(
                "a scan for {count} entries returned {}",
                entries.len()
            ));
        }
        let mut prev: Option<&[u8]> = None;
        let mut indexed = 0usize;
        for (k, v) in entries {
            if k.as_slice() < start {
                return Err("a scan returned a key before its start key".into());
            }
            if prev.is_some_and(|p| p >= k.as_slice()) {
                return Err("a scan returned keys out of order".into());
            }
            prev = Some(k);
            let (n, version) = check_value(v)?;
            if key_of(n) != *k {
                return Err(format!(
                    "a scan returned record {n}'s value under another key"
                ));
            }
            if version == 0 || version > self.ceiling(n) {
                return Err(format!(
                    "record {n}: a scan returned version {version}, never written"
                ));
            }
            indexed += order.is_some_and(|o| o.holds(n)) as usize;
        }
        if let (Some(order), Some((last, _))) = (order, entries.last()) {
            let expected = order.between(start, last, &key_of);
            if indexed != expected {
                return Err(format!(
                    "a scan returned {indexed} of the {expected} records acknowledged between its start key and its last key"
                ));
            }
        }
        let last = entries.last().map_or(start, |(k, _)| k.as_slice());
        let covered = if entries.is_empty() {
            last > max_key
        } else {
            last >= max_key
        };
        if entries.len() < count && !covered {
            return Err(format!(
                "a scan for {count} entries returned {}, but acknowledged keys lie past its end",
                entries.len()
            ));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The values are the same bytes as before the two-pass fill (8 letters made and written at a time), at
    /// every length, so stored data and reports stay comparable; and every value checks whole at every length,
    /// across the check's page boundaries.
    #[test]
    fn the_two_pass_fill_writes_the_one_pass_bytes_and_checks_at_every_length() {
        fn one_pass(n: u64, version: u64, out: &mut [u8]) {
            let mut state = seed(n, version);
            for chunk in out.chunks_mut(8) {
                let r = splitmix(&mut state).to_le_bytes();
                for (o, b) in chunk.iter_mut().zip(r) {
                    *o = letter(b);
                }
            }
        }
        for len in (0..=600).chain([999, 1000, 1001, 4096]) {
            for (n, version) in [(0, 1), (7, 3), (123_456_789, 42)] {
                let (mut a, mut b) = (vec![0u8; len], vec![0u8; len]);
                one_pass(n, version, &mut a);
                fill(n, version, &mut b);
                assert_eq!(a, b, "length {len}");
                assert!(filled(n, version, &b));
                if len > 0 {
                    b[len - 1] ^= 1;
                    assert!(!filled(n, version, &b), "length {len}: last byte flipped");
                }
            }
        }
    }

    #[test]
    fn values_rebuild_from_their_header() {
        let v = make_value(42, 7, 100);
        assert_eq!(check_value(&v), Ok((42, 7)));
        let mut bad = v.clone();
        bad[60] ^= 1;
        assert!(check_value(&bad).is_err());
        let mut swapped = v.clone();
        swapped[8] = 8;
        assert!(check_value(&swapped).is_err());
        assert!(check_value(&v[..10]).is_err());
    }

    #[test]
    fn values_are_letters_and_every_damaged_byte_or_cut_is_caught() {
        // the letters chunk by chunk, as the generator made them before whole chunks were mapped as arrays
        let old = |n: u64, version: u64, len: usize| {
            let mut state = n.wrapping_mul(0xD6E8_FEB8_6659_FD93) ^ version;
            let mut out = vec![0u8; len];
            for chunk in out.chunks_mut(8) {
                let r = splitmix(&mut state).to_le_bytes();
                for (o, b) in chunk.iter_mut().zip(r) {
                    *o = b'a' + b % 26;
                }
            }
            out
        };
        for len in [16, 17, 23, 24, 25, 31, 100, 1000, 1001] {
            let v = make_value(3, 11, len);
            assert_eq!(
                v[HEADER_BYTES..],
                old(3, 11, len - HEADER_BYTES)[..],
                "{len}"
            );
            assert_eq!(check_value(&v), Ok((3, 11)));
            for pos in HEADER_BYTES..len {
                let mut bad = v.clone();
                bad[pos] ^= 0x20;
                assert!(check_value(&bad).is_err(), "{len} bytes, byte {pos}");
            }
            // a value cut short (or grown) is caught too, whatever is left of it
            for cut in HEADER_BYTES..len {
                assert!(check_value(&v[..cut]).is_err(), "{len} bytes cut to {cut}");
            }
            let mut longer = v.clone();
            longer.extend_from_slice(b"abcdefgh");
            assert!(check_value(&longer).is_err(), "{len} bytes grown");
        }
    }

    #[test]
    fn reads_are_checked_against_what_was_acknowledged() {
        let l = Ledger::default();
        assert_eq!(l.check_read(5, l.acknowledged(5), None), Ok(()));
        let _g = l.lock(5);
        let v1 = l.issue(5);
        l.acknowledge(5, v1, b"k5");
        let v2 = l.issue(5);
        // v2 issued, not acknowledged: either version may be read
        let floor = l.acknowledged(5);
        assert_eq!(floor, 1);
        assert!(l.check_read(5, floor, Some(&make_value(5, v1, 32))).is_ok());
        assert!(l.check_read(5, floor, Some(&make_value(5, v2, 32))).is_ok());
        l.acknowledge(5, v2, b"k5");
        let floor = l.acknowledged(5);
        assert!(l
            .check_read(5, floor, Some(&make_value(5, v1, 32)))
            .is_err());
        assert!(l.check_read(5, floor, None).is_err());
        assert!(l.check_read(5, floor, Some(&make_value(5, 9, 32))).is_err());
        assert!(l
            .check_read(5, floor, Some(&make_value(6, v2, 32)))
            .is_err());
        // records far apart live in different chunks, those past the lock-free ones in the overflow
        let _h = l.lock(1 << 20);
        assert_eq!(l.issue(1 << 20), 1);
        let far = (DIRECT_CHUNKS * CHUNK + 3) as u64;
        assert_eq!(l.acknowledged(far), 0);
        l.acknowledge(far, 2, b"far");
        assert_eq!(l.acknowledged(far), 2);
        assert_eq!(l.acknowledged(far + CHUNK as u64), 0);
    }

    #[test]
    fn scans_are_checked_for_count_order_and_coverage() {
        let l = Ledger::default();
        let key = |n: u64| format!("k{n:03}").into_bytes();
        for n in 0..10 {
            let v = l.issue(n);
            l.acknowledge(n, v, &key(n));
        }
        let entry = |n: u64| (key(n), make_value(n, 1, 40));
        let max = l.max_key();
        assert_eq!(max, key(9));
        let ok: Vec<_> = (3..6).map(entry).collect();
        assert!(l.check_scan(&key(3), 3, &max, &ok, key, None).is_ok());
        // short, but the scan reached the last key
        let tail: Vec<_> = (7..10).map(entry).collect();
        assert!(l.check_scan(&key(7), 5, &max, &tail, key, None).is_ok());
        // short while keys remain
        assert!(l.check_scan(&key(3), 5, &max, &ok, key, None).is_err());
        assert!(l.check_scan(&key(3), 2, &max, &ok, key, None).is_err());
        assert!(l.check_scan(&key(3), 5, &max, &[], key, None).is_err());
        assert!(l.check_scan(b"z", 5, &max, &[], key, None).is_ok());
        let disordered = vec![entry(4), entry(3)];
        assert!(l
            .check_scan(&key(3), 2, &max, &disordered, key, None)
            .is_err());
        let misplaced = vec![(key(3), make_value(4, 1, 40))];
        assert!(l
            .check_scan(&key(3), 1, &max, &misplaced, key, None)
            .is_err());
        assert!(l
            .check_scan(&key(4), 1, &max, &[entry(3)], key, None)
            .is_err());
    }

    /// A scan that leaves out a record acknowledged before its phase fails, wherever the gap lies, and one that
    /// returns every such record passes, with records written during the phase among them or not; a record
    /// the load never got acknowledged is not expected.
    #[test]
    fn a_scan_that_skips_an_acknowledged_record_fails() {
        let l = Ledger::default();
        // keys out of record order, as hashed keys are
        let key = |n: u64| format!("k{:03}", (n * 7) % 20).into_bytes();
        for n in (0..20).filter(|&n| n != 5) {
            let v = l.issue(n);
            l.acknowledge(n, v, &key(n));
        }
        let order = KeyOrder::new(&l, 20, key).unwrap();
        assert!(order.holds(3) && !order.holds(5) && !order.holds(20));
        // records by key: k000 is 0, k001 is 3, k002 is 6, ... (n = 3k mod 20)
        let by_key: Vec<u64> = (0..20).map(|k| (k * 3) % 20).collect();
        let entry = |n: u64| (key(n), make_value(n, 1, 40));
        let max = l.max_key();
        let run: Vec<_> = by_key[2..8]
            .iter()
            .filter(|&&n| n != 5)
            .map(|&n| entry(n))
            .collect();
        let start = key(by_key[2]);
        assert!(l
            .check_scan(&start, run.len(), &max, &run, key, Some(&order))
            .is_ok());
        for gap in 1..run.len() - 1 {
            let mut skipped = run.clone();
            skipped.remove(gap);
            assert!(
                l.check_scan(&start, run.len() - 1, &max, &skipped, key, Some(&order))
                    .is_err(),
                "a gap at {gap} went unseen"
            );
            // without the order, only the count and coverage are checked: the gap passes
            assert!(l
                .check_scan(&start, run.len() - 1, &max, &skipped, key, None)
                .is_ok());
        }
        // a record inserted during the phase (20, beyond the order's bound) may appear between them
        let v = l.issue(20);
        l.acknowledge(20, v, b"k002a");
        let mut with_new = run.clone();
        with_new.insert(1, (b"k002a".to_vec(), make_value(20, 1, 40)));
        let key_new = |n: u64| if n == 20 { b"k002a".to_vec() } else { key(n) };
        assert!(l
            .check_scan(
                &start,
                with_new.len(),
                &max,
                &with_new,
                key_new,
                Some(&order)
            )
            .is_ok());
        // the first returned key past the start key skips the records between them
        let late = run[1..].to_vec();
        assert!(l
            .check_scan(&start, late.len(), &max, &late, key, Some(&order))
            .is_err());
    }
}

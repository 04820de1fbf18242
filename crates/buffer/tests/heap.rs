//! The buffers' byte counts against the heap they really take, under a counting global allocator (this
//! test binary's only allocator; the test runs alone in its binary so nothing else allocates meanwhile).

use cosine_buffer::{HashLogBuffer, SortedBuffer, WriteBuffer};
use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicIsize, Ordering};

struct Counting;

static HEAP: AtomicIsize = AtomicIsize::new(0);

unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        HEAP.fetch_add(layout.size() as isize, Ordering::Relaxed);
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        HEAP.fetch_sub(layout.size() as isize, Ordering::Relaxed);
        unsafe { System.dealloc(ptr, layout) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

/// Fills `b` with `n` entries of `value_len`-byte values (a tenth of them rewritten) and returns (heap bytes
/// the buffer holds, bytes it reports).
fn fill(b: &dyn WriteBuffer, n: u64, value_len: usize) -> (isize, usize) {
    // keys and values are made before the count starts, then moved in
    let entries: Vec<(Vec<u8>, Vec<u8>)> = (0..n)
        .map(|i| {
            let k = format!("user{:016}", (i * 7919) % n).into_bytes();
            (k, vec![i as u8; value_len])
        })
        .collect();
    let before = HEAP.load(Ordering::SeqCst);
    let moved: isize = entries
        .iter()
        .map(|(k, v)| (k.capacity() + v.capacity()) as isize)
        .sum();
    for (i, (k, v)) in entries.into_iter().enumerate() {
        b.insert(k, i as u64, Some(v));
    }
    // the entries' own allocations moved into the buffer (counted before `before`); the outer Vec was freed
    let held = HEAP.load(Ordering::SeqCst) - before + moved;
    (held, b.bytes())
}

/// Checks that `b`, filled with `n` entries, reports within [0.7, 1.05] of the heap it holds (plus 4 KiB).
fn reports_its_heap(name: &str, b: &dyn WriteBuffer, n: u64, value_len: usize) {
    // the outer Vec of entries is freed during `fill`: count it back in
    let outer = (n as usize * std::mem::size_of::<(Vec<u8>, Vec<u8>)>()) as isize;
    let (held, reported) = fill(b, n, value_len);
    let held = held + outer;
    assert!(
        held as f64 <= reported as f64 * 1.05 + 4096.0,
        "{name}, {value_len}-byte values: heap {held} > reported {reported}"
    );
    assert!(
        held as f64 >= reported as f64 * 0.7,
        "{name}, {value_len}-byte values: heap {held} far below reported {reported}"
    );
}

#[test]
fn buffers_report_the_heap_they_hold() {
    for value_len in [0usize, 8, 100, 1000] {
        reports_its_heap(
            "skiplist",
            &SortedBuffer::new(usize::MAX),
            20_000,
            value_len,
        );
        reports_its_heap(
            "hash log",
            &HashLogBuffer::new(usize::MAX),
            20_000,
            value_len,
        );
    }
}

/// A reader racing writers of the same key always finds a version in the buffer, never an older one than it
/// found before (a skiplist replace that unlinks the old node before linking the new one fails this).
#[test]
fn a_key_being_updated_never_disappears_from_the_buffer() {
    use cosine_buffer::{SortedBuffer, WriteBuffer};
    use std::sync::atomic::{AtomicBool, Ordering};
    let b = std::sync::Arc::new(SortedBuffer::new(usize::MAX));
    b.insert(b"hot".to_vec(), 1, Some(b"v1".to_vec()));
    let done = std::sync::Arc::new(AtomicBool::new(false));
    let writers: Vec<_> = (0..2u64)
        .map(|t| {
            let (b, done) = (b.clone(), done.clone());
            std::thread::spawn(move || {
                let mut seq = 2 + t;
                while !done.load(Ordering::Relaxed) {
                    b.insert(b"hot".to_vec(), seq, Some(seq.to_le_bytes().to_vec()));
                    seq += 2;
                }
            })
        })
        .collect();
    let mut last = 0;
    for _ in 0..300_000 {
        let (seq, _) = b.get(b"hot").expect("the key vanished while being updated");
        assert!(seq >= last, "version {seq} after {last}");
        last = seq;
    }
    done.store(true, Ordering::Relaxed);
    for w in writers {
        w.join().unwrap();
    }
}

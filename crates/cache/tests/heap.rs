//! The cache's weights against the heap it really takes: a counting allocator measures the bytes a full cache
//! holds, so M_BC means memory, not a figure the weights make up.

use cosine_cache::EntryCache;
use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicIsize, Ordering};

struct Counting;

static LIVE: AtomicIsize = AtomicIsize::new(0);

unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        LIVE.fetch_add(layout.size() as isize, Ordering::Relaxed);
        System.alloc(layout)
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        LIVE.fetch_sub(layout.size() as isize, Ordering::Relaxed);
        System.dealloc(ptr, layout)
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        LIVE.fetch_add(
            new_size as isize - layout.size() as isize,
            Ordering::Relaxed,
        );
        System.realloc(ptr, layout, new_size)
    }
}

#[global_allocator]
static ALLOC: Counting = Counting;

/// Heap bytes a cache of `capacity` holds once filled with entries of `key` and `value` bytes, over the bytes
/// its weights count (the bytes asked of the allocator; glibc's malloc adds 8-16 bytes a block besides).
fn heap_over_weight(capacity: u64, key: usize, value: usize) -> f64 {
    let before = LIVE.load(Ordering::Relaxed);
    let c = EntryCache::new(capacity).unwrap();
    let v = vec![7u8; value];
    for i in 0..(4 * capacity as usize / (key + value)) {
        let mut k = vec![0u8; key];
        k[..8].copy_from_slice(&(i as u64).to_be_bytes());
        let t = c.lookup(&k).unwrap_err();
        c.fill(&k, &v, t);
    }
    let heap = LIVE.load(Ordering::Relaxed) - before;
    let ratio = heap as f64 / c.bytes() as f64;
    eprintln!(
        "{capacity} B cache, {key} + {value} B entries: {} entries, weights {} B, heap {heap} B ({ratio:.3}x)",
        c.len(),
        c.bytes()
    );
    ratio
}

#[test]
fn a_full_cache_takes_about_the_memory_its_weights_count() {
    // the sizes the named workloads use (16-byte keys; 1,000-byte and 100-byte values) and a small one
    for (key, value) in [(16, 1000), (16, 100), (16, 16)] {
        let ratio = heap_over_weight(4 << 20, key, value);
        assert!(
            (0.75..1.1).contains(&ratio),
            "{key} + {value} B entries: heap {ratio:.3}x the weights"
        );
    }
}

//! The engine within its design's memory: a counting global allocator (a thin wrapper over the system
//! allocator) tracks the heap this test binary holds while each of the five shapes loads data ten times or
//! more its design's memory (M_B + M_BF + M_FP), then reads it back. The heap may never exceed the design's
//! memory × 1.1 plus a fixed allowance for what no design primitive prices (threads, I/O buffers, merge
//! cursors, file handles and run metadata).
//!
//! The default run loads 24 MiB per shape with 1 MiB write buffers; `cargo test -p cosine-engine --release --test memory --
//! --ignored` loads 160 MiB per shape with 6 MiB write buffers.

use cosine_design::{Design, DesignClass, FilterGranularity};
use cosine_engine::{Engine, Options, SyncMode};
use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicUsize, Ordering};

mod common;

struct Counting;

static HEAP: AtomicUsize = AtomicUsize::new(0);
static PEAK: AtomicUsize = AtomicUsize::new(0);

unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        let now = HEAP.fetch_add(layout.size(), Ordering::Relaxed) + layout.size();
        PEAK.fetch_max(now, Ordering::Relaxed);
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        HEAP.fetch_sub(layout.size(), Ordering::Relaxed);
        unsafe { System.dealloc(ptr, layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        if new_size > layout.size() {
            let now = HEAP.fetch_add(new_size - layout.size(), Ordering::Relaxed) + new_size
                - layout.size();
            PEAK.fetch_max(now, Ordering::Relaxed);
        } else {
            HEAP.fetch_sub(layout.size() - new_size, Ordering::Relaxed);
        }
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

/// Heap beyond the design's memory that the engine may hold (the bound): run-file write buffers
/// (64 KiB each), merge cursors of one block per input run, the per-file metadata of every file, a flush's
/// sorted keys of a hash-log buffer.
const ALLOWANCE: usize = 8 << 20;

/// The five shapes at `buffer` bytes of M_B, filter and fence memory in proportion.
fn designs(buffer: u64) -> Vec<(&'static str, Design)> {
    common::shapes()
        .into_iter()
        .map(|(name, mut d)| {
            d.buffer_bytes = buffer;
            d.block_bytes = 4096;
            if d.filter_bytes > 0 {
                d.filter_bytes = buffer / 4;
            }
            d.fence_bytes = buffer / 4;
            if d.class == Some(DesignClass::Lsh) {
                // the hash index of every key: 8 bytes a key (and 16 a block) must fit M_FP
                d.fence_bytes = buffer;
                d.filter_granularity = FilterGranularity::Run;
            } else {
                d.file_bytes = buffer;
            }
            (name, d)
        })
        .collect()
}

fn load_within_memory(buffer: u64, data_bytes: u64, allowance: usize) {
    const VALUE: usize = 200;
    for (name, design) in designs(buffer) {
        let dir = tempfile::tempdir().unwrap();
        let budget = design.memory_bytes() as usize;
        let base = HEAP.load(Ordering::SeqCst);
        PEAK.store(base, Ordering::SeqCst);
        let engine =
            Engine::open_with(dir.path(), &design, Options::with_sync(SyncMode::Never)).unwrap();
        let n = data_bytes / (VALUE as u64 + 16);
        let value = vec![b'v'; VALUE];
        let mut key = Vec::with_capacity(32);
        for i in 0..n {
            key.clear();
            // scrambled order, so that every level's runs overlap
            key.extend_from_slice(format!("user{:012}", (i * 2_654_435_761) % n).as_bytes());
            engine.put(&key, &value).unwrap();
        }
        engine.wait_for_compactions().unwrap();
        for i in (0..n).step_by(97) {
            let k = format!("user{i:012}");
            assert_eq!(
                engine.get(k.as_bytes()).unwrap().as_deref(),
                Some(&value[..]),
                "{name}: {k}"
            );
        }
        let scanned = engine.scan(.., 1000).unwrap();
        assert_eq!(scanned.len(), 1000.min(n as usize));
        let stats = engine.stats();
        let peak = PEAK.load(Ordering::SeqCst) - base;
        engine.close().unwrap();
        let bound = (budget as f64 * 1.1) as usize + allowance;
        eprintln!(
            "{name}: design memory {} KiB, data {} MiB on disk, peak heap {} KiB (bound {} KiB); buffers {} KiB, filters {} KiB, fences {} KiB",
            budget >> 10,
            stats.disk_bytes >> 20,
            peak >> 10,
            bound >> 10,
            stats.memory.buffer_bytes >> 10,
            stats.memory.filter_bytes >> 10,
            stats.memory.fence_bytes >> 10,
        );
        assert!(
            stats.disk_bytes as usize >= 10 * budget,
            "{name}: the data ({} B) must be at least 10x the design's memory ({budget} B)",
            stats.disk_bytes
        );
        assert!(
            peak <= bound,
            "{name}: peak heap {peak} B above the design's {budget} B x 1.1 + {allowance} B"
        );
    }
}

/// At this small scale the allowance is 2 MiB, not 8: a tighter bound than the issue's. It fails an engine
/// that holds three write buffers of M_B each, as this one did (3 MiB of buffers alone), but not one extra
/// buffer of M_B/2: the counting is of requested bytes, and the allowance covers what no primitive prices.
#[test]
fn every_shape_loads_ten_times_its_memory_within_it() {
    load_within_memory(1 << 20, 24 << 20, 2 << 20);
}

#[test]
#[ignore = "long: 160 MiB per shape; run with cargo test -p cosine-engine --release --test memory -- --ignored"]
fn every_shape_loads_ten_times_its_memory_within_it_at_scale() {
    load_within_memory(6 << 20, 160 << 20, ALLOWANCE);
}

//! The engine within its design's memory: a counting global allocator (a thin wrapper over the system
//! allocator) tracks the heap this test binary holds while each shape of `tests/common` loads data ten times or
//! more its design's memory (M_B + M_BF + M_FP), then reads it back. The heap may never exceed the design's
//! memory × 1.1 plus a fixed allowance for what no design primitive prices (threads, I/O buffers, merge
//! cursors, file handles and run metadata).
//!
//! Three threads write, heap bytes are counted as the allocator hands them out (glibc's chunks), and the
//! engine is reopened after the load so the log's replay counts too. The default run loads 24 MiB per shape
//! with 1 MiB write buffers; `cargo test -p cosine-engine --release --test memory -- --ignored` (run by CI)
//! loads 160 MiB per shape with 6 MiB write buffers against the bound (memory × 1.1 + 8 MiB).

use cosine_design::{Design, DesignClass, FilterGranularity};
use cosine_engine::{Engine, Options, SyncMode};
use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicUsize, Ordering};

mod common;

struct Counting;

static HEAP: AtomicUsize = AtomicUsize::new(0);
static PEAK: AtomicUsize = AtomicUsize::new(0);

/// What the heap hands out for a request: glibc's chunk (header and rounding), not the bytes asked for.
fn chunk(size: usize) -> usize {
    cosine_buffer::alloc_bytes(size)
}

unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        let c = chunk(layout.size());
        let now = HEAP.fetch_add(c, Ordering::Relaxed) + c;
        PEAK.fetch_max(now, Ordering::Relaxed);
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        HEAP.fetch_sub(chunk(layout.size()), Ordering::Relaxed);
        unsafe { System.dealloc(ptr, layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        let (old, new) = (chunk(layout.size()), chunk(new_size));
        if new > old {
            let now = HEAP.fetch_add(new - old, Ordering::Relaxed) + new - old;
            PEAK.fetch_max(now, Ordering::Relaxed);
        } else {
            HEAP.fetch_sub(old - new, Ordering::Relaxed);
        }
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

/// Every test of this binary allocates on the counted heap: they run one at a time.
static SERIAL: std::sync::Mutex<()> = std::sync::Mutex::new(());

/// Writer threads of the load: writes from several threads at once, as a server's.
const WRITERS: u64 = 3;

#[global_allocator]
static GLOBAL: Counting = Counting;

/// Heap beyond the design's memory that the engine may hold (the bound): run-file write buffers
/// (64 KiB each), merge cursors of one block per input run, the per-file metadata of every file, a flush's
/// sorted keys of a hash-log buffer.
const ALLOWANCE: usize = 8 << 20;

/// The shapes of `tests/common` at `buffer` bytes of M_B, filter and fence memory in proportion.
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
    let _serial = SERIAL.lock().unwrap_or_else(|p| p.into_inner());
    for (name, design) in designs(buffer) {
        let dir = tempfile::tempdir().unwrap();
        let budget = design.memory_bytes() as usize;
        let base = HEAP.load(Ordering::SeqCst);
        PEAK.store(base, Ordering::SeqCst);
        let engine =
            Engine::open_with(dir.path(), &design, Options::with_sync(SyncMode::Never)).unwrap();
        let n = data_bytes / (VALUE as u64 + 16);
        let value = vec![b'v'; VALUE];
        std::thread::scope(|s| {
            for t in 0..WRITERS {
                let (engine, value) = (&engine, &value);
                s.spawn(move || {
                    let mut key = Vec::with_capacity(32);
                    for i in (t..n).step_by(WRITERS as usize) {
                        key.clear();
                        // scrambled order, so that every level's runs overlap
                        key.extend_from_slice(
                            format!("user{:012}", (i * 2_654_435_761) % n).as_bytes(),
                        );
                        engine.put(&key, value).unwrap();
                    }
                });
            }
        });
        engine.wait_for_compactions().unwrap();
        let reads_back = |engine: &Engine, step: usize, when: &str| {
            for i in (0..n).step_by(step) {
                let k = format!("user{i:012}");
                assert_eq!(
                    engine.get(k.as_bytes()).unwrap().as_deref(),
                    Some(&value[..]),
                    "{name} {when}: {k}"
                );
            }
        };
        reads_back(&engine, 97, "after the load");
        let scanned = engine.scan(.., 1000).unwrap();
        assert_eq!(scanned.len(), 1000.min(n as usize));
        let stats = engine.stats();
        engine.close().unwrap();
        // a restart replays what the buffers held (the log is not flushed at close) within the same memory
        let engine =
            Engine::open_with(dir.path(), &design, Options::with_sync(SyncMode::Never)).unwrap();
        reads_back(&engine, 997, "after a reopen");
        engine.wait_for_compactions().unwrap();
        engine.close().unwrap();
        let peak = PEAK.load(Ordering::SeqCst) - base;
        // a scan's cursors: a data block and an on-disk index block of every run it merges (an LSH log's
        // dozens of runs each; priced by no design primitive, and the one transient that grows with the runs)
        let runs: usize = stats.levels.iter().map(|l| l.runs).sum();
        let cursors = runs * 2 * design.block_bytes as usize;
        let bound = (budget as f64 * 1.1) as usize + allowance + cursors;
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
            "{name}: peak heap {peak} B above the design's {budget} B x 1.1 + {allowance} B + {runs} runs' scan cursors"
        );
    }
}

/// At this small scale the allowance is 1 MiB, not 8 MiB: a far tighter bound than the issue's. Peaks here
/// run 0.3-0.6 MiB above the designs' memory (1.3-2.0 MiB, three writers, a reopen), about 1 MiB for the
/// LSH shape with the hybrid log (its read-only region keeps M_B full, and a scan opens a cursor on each of
/// its ~54 runs, which the bound adds); a third write buffer of M_B, or a second copy of the fences and
/// filters through a compaction, fails it.
#[test]
fn every_shape_loads_ten_times_its_memory_within_it() {
    load_within_memory(1 << 20, 24 << 20, 1 << 20);
}

#[test]
#[ignore = "long: 160 MiB per shape; run with cargo test -p cosine-engine --release --test memory -- --ignored"]
fn every_shape_loads_ten_times_its_memory_within_it_at_scale() {
    load_within_memory(6 << 20, 160 << 20, ALLOWANCE);
}

/// Keys [`load_tiered`] writes.
const TIERED_KEYS: u64 = 40_000;

/// The key [`load_tiered`] writes `i`-th (scattered over the key space).
fn tiered_key(i: u64) -> String {
    format!("key{:08}", i.wrapping_mul(2_654_435_761) % 1_000_000_007)
}

/// A key no load writes, inside the key range the loads cover (a lookup outside every file's range would be
/// answered by the range check, before any filter).
fn absent_key(i: u64) -> String {
    format!("{}x", tiered_key(i))
}

/// What `lookups` lookups of absent keys cost `e`: per level (level, runs, filter probes, block reads), and
/// block reads per lookup in all.
fn absent_lookups(e: &Engine, lookups: u64) -> (Vec<(usize, usize, u64, u64)>, f64) {
    let before = e.stats();
    for i in 0..lookups {
        assert!(e.get(absent_key(i).as_bytes()).unwrap().is_none());
    }
    let after = e.stats();
    let per_level = after
        .levels
        .iter()
        .zip(&before.levels)
        .map(|(l, b)| {
            (
                l.level,
                l.runs,
                l.io.filter_probes - b.io.filter_probes,
                l.io.block_reads - b.io.block_reads,
            )
        })
        .collect();
    let reads = (after.block_reads() - before.block_reads()) as f64 / lookups as f64;
    (per_level, reads)
}

/// Every run of every level answered the absent keys of [`absent_lookups`] through its filter (a small run's
/// key range answers a few itself; a run without a filter would take a whole `lookups` off its level's
/// probes).
fn assert_every_run_filtered(per_level: &[(usize, usize, u64, u64)], lookups: u64, case: &str) {
    for &(level, runs, probes, _) in per_level {
        assert!(
            2 * probes + lookups > 2 * runs as u64 * lookups,
            "{case}: level {level} has a run without a filter: {per_level:?}"
        );
    }
}

/// A tree of T = 16 with `k` runs per hot level and `z` per cold one, ~10 filter bits per key over the whole
/// data, loaded with [`TIERED_KEYS`] keys in many small flushes and settled.
fn load_tiered(dir: &std::path::Path, k: u64, z: u64) -> (Engine, Design) {
    let mut d = Design::tiered(16, 64 << 10, TIERED_KEYS * 10 / 8, 4 << 20);
    d.hot_runs = k;
    d.cold_runs = z;
    d.block_bytes = 1024;
    d.file_bytes = 4 << 20;
    let e = Engine::open_with(dir, &d, Options::with_sync(SyncMode::Never)).unwrap();
    for i in 0..TIERED_KEYS {
        e.put(tiered_key(i).as_bytes(), &[7u8; 40]).unwrap();
    }
    e.flush().unwrap();
    e.wait_for_compactions().unwrap();
    (e, d)
}

/// Filter memory on a level that gathers many runs: runs written while the data was small must not keep
/// the filter memory the later ones need. While each compaction output took whatever filter memory was left
/// (first come, first served), a tiered last level of 22 runs (600,000 records, M_BF = 1.1 MB) kept filters
/// on a few runs and none on the rest, and a lookup read a block in every run it passed: 7.2 per lookup. With
/// each output taking an even share of what is left among the runs its level may still receive: 0.8.
#[test]
fn every_run_of_a_tiered_last_level_keeps_a_filter() {
    // (every test of this binary allocates on the counted heap: one at a time)
    let _serial = SERIAL.lock().unwrap_or_else(|p| p.into_inner());
    let dir = tempfile::tempdir().unwrap();
    let n = TIERED_KEYS;
    let (e, d) = load_tiered(dir.path(), 15, 15);
    let runs: usize = e.stats().levels.iter().map(|l| l.runs).sum();
    assert!(runs >= 8, "the tree should gather many runs: {runs}");
    let before = e.stats();
    for i in (0..n).step_by(7) {
        assert!(e.get(tiered_key(i).as_bytes()).unwrap().is_some());
    }
    let after = e.stats();
    let lookups = n.div_ceil(7);
    let reads = (after.block_reads() - before.block_reads()) as f64 / lookups as f64;
    // one block for the key's own run, and false positives of the filters passed on the way
    assert!(
        reads < 1.3,
        "{reads:.2} blocks per lookup over {runs} runs: some runs have no filter"
    );
    assert!(after.memory.filter_bytes as u64 <= d.filter_bytes + 64 * 1024);
}

/// The even share of filter memory counts the runs the compaction planner lets a level gather, hot (K) and
/// cold (Z) alike, also when the two differ: every run keeps a filter, so lookups of absent keys (inside the
/// key range, so that no range check answers them first) are answered by each run's filter.
///
/// With many runs at the hot levels and one at the last (K = 15, Z = 1) they read almost no block. With one
/// run at the hot levels and up to 15 at the last (K = 1, Z = 15), the last level stops at 5 runs for this
/// data: each took an even share among the 15 it might have gathered (about 3.5 bits per key where M_BF
/// affords 10), so absent lookups read about one block in all (a false positive in one of the 5 runs) and
/// two thirds of M_BF stay unused. Known, not fixed: the share guards against the data growing, and nothing
/// yet gives a run a stronger filter later.
#[test]
fn absent_keys_read_almost_nothing_when_hot_and_cold_run_counts_differ() {
    let _serial = SERIAL.lock().unwrap_or_else(|p| p.into_inner());
    for (k, z, bound) in [(15u64, 1u64, 0.3), (1, 15, 1.5)] {
        let dir = tempfile::tempdir().unwrap();
        let (e, _) = load_tiered(dir.path(), k, z);
        let (per_level, reads) = absent_lookups(&e, 5_000);
        assert_every_run_filtered(&per_level, 5_000, &format!("K = {k}, Z = {z}"));
        assert!(
            reads < bound,
            "K = {k}, Z = {z}: {reads:.2} blocks per absent lookup: {per_level:?}"
        );
    }
}

/// Filter memory on a last level that merges in place: it holds Z runs, receives one more, and merges its
/// oldest (large) run with the next. While each output's share counted only the runs up to Z, the merged run
/// took all the filter memory that was left each time and the small runs arriving beside it got none, so
/// every lookup read a block in each of them (held-out validate seed 37's random design #4, T = 5, K = 2,
/// Z = 3: 1.18 blocks per YCSB-D lookup where the model priced 0.57; 0.63 with the arrival counted).
#[test]
fn the_small_runs_beside_a_last_levels_merged_run_keep_their_filters() {
    let _serial = SERIAL.lock().unwrap_or_else(|p| p.into_inner());
    let dir = tempfile::tempdir().unwrap();
    let n = 30_000u64;
    let mut d = Design::tiered(5, 16 << 10, n * 16 / 8, 1 << 20);
    d.hot_runs = 2;
    d.cold_runs = 3;
    d.compaction = cosine_design::Compaction::Hybrid;
    d.full_compaction_levels = 2;
    d.merge_threshold = 0.75;
    d.run_strategy = cosine_design::RunStrategy::First;
    d.file_picking = cosine_design::FilePicking::Oldest;
    d.filter_granularity = FilterGranularity::File;
    d.block_bytes = 1024;
    d.file_bytes = 1 << 20;
    let e = Engine::open_with(dir.path(), &d, Options::with_sync(SyncMode::Never)).unwrap();
    // in settled batches of about one flush each, so that the tree is the planner's and not how compaction
    // kept pace with the writer (unsettled, one load in a few ended with the last level freshly merged whole)
    for batch in (0..n).collect::<Vec<_>>().chunks(150) {
        for &i in batch {
            e.put(tiered_key(i).as_bytes(), &[7u8; 40]).unwrap();
        }
        e.flush().unwrap();
        e.wait_for_compactions().unwrap();
    }
    let stats = e.stats();
    let last = stats.levels.iter().rev().find(|l| l.runs > 0).unwrap();
    assert!(
        last.runs >= 2,
        "the last level should hold its merged run and small ones beside it: {:?}",
        stats.levels
    );
    let (per_level, reads) = absent_lookups(&e, 5_000);
    assert_every_run_filtered(&per_level, 5_000, "Z = 3 merging in place");
    // settled, the small runs kept a filter before too, but a weak one: the merged run had taken nearly all the
    // memory left (0.14 blocks per absent lookup; 0.006 with the arrivals counted)
    assert!(
        reads < 0.05,
        "{reads:.3} blocks per absent lookup: {per_level:?}"
    );
}

/// Filter memory on a leveled tree whose last level was written while the levels above it were empty (a full
/// push had just emptied them): the levels above must still get Monkey's bits when their next runs are written.
/// While an output counted only the filters other files held at that moment, the last level's output took what
/// Monkey planned for the levels above, their next compaction outputs got no filter, and every lookup read a
/// block in each of them (a held-out validate cell: 2.4 blocks per lookup where the model priced 0.8).
#[test]
fn the_levels_above_a_freshly_pushed_last_level_keep_their_filters() {
    // not beside the three-writer loads: the tree this load leaves depends on how compaction keeps pace, and
    // with the machine's cores taken by another test it missed the bound in 1 of 6 runs (0.11 blocks)
    let _serial = SERIAL.lock().unwrap_or_else(|p| p.into_inner());
    let dir = tempfile::tempdir().unwrap();
    let n = 30_000u64;
    let mut d = Design::tiered(12, 8 << 10, n * 23 / 8, 1 << 20);
    d.hot_runs = 1;
    d.cold_runs = 1;
    d.block_bytes = 1024;
    d.file_bytes = 4 << 20;
    let e = Engine::open_with(dir.path(), &d, Options::with_sync(SyncMode::Never)).unwrap();
    for i in 0..n {
        e.put(tiered_key(i).as_bytes(), &[7u8; 40]).unwrap();
    }
    e.flush().unwrap();
    e.wait_for_compactions().unwrap();
    // new keys in small settled batches: each one merges into the upper levels after the load's last push
    for batch in 0..8u64 {
        for i in 0..200 {
            e.put(tiered_key(n + batch * 200 + i).as_bytes(), &[8u8; 40])
                .unwrap();
        }
        e.flush().unwrap();
        e.wait_for_compactions().unwrap();
    }
    let before = e.stats();
    let lookups = 5_000u64;
    for i in 0..lookups {
        assert!(e.get(absent_key(i).as_bytes()).unwrap().is_none());
    }
    let after = e.stats();
    // every level that holds entries answered the absent keys with its filters
    for (l, b) in after.levels.iter().zip(&before.levels) {
        if l.entries > 0 {
            assert!(
                l.io.filter_probes > b.io.filter_probes,
                "level {} ({} entries) has no filter: {:?}",
                l.level,
                l.entries,
                after.levels
            );
        }
    }
    let reads = (after.block_reads() - before.block_reads()) as f64 / lookups as f64;
    assert!(reads < 0.1, "{reads:.2} blocks per absent lookup");
}

/// A large batch's log record is encoded into room the writer hands back once it is logged: the heap after
/// it is what it was before, give or take the batch's entries in the write buffer, not the record's 16 MiB.
#[test]
fn a_large_batch_leaves_no_record_sized_scratch_behind() {
    let _serial = SERIAL.lock().unwrap_or_else(|p| p.into_inner());
    let dir = tempfile::tempdir().unwrap();
    // a buffer far larger than the batch: the batch stays in it, no flush runs meanwhile
    let design = Design::rocksdb_like(256 << 20, 1 << 20, 1 << 20);
    let e = Engine::open_with(dir.path(), &design, Options::with_sync(SyncMode::Never)).unwrap();
    e.put(b"small", b"x").unwrap();
    let value = vec![b'v'; 4 << 20];
    let keys: Vec<String> = (0..4).map(|i| format!("large{i}")).collect();
    let batch: Vec<(&[u8], Option<&[u8]>)> = keys
        .iter()
        .map(|k| (k.as_bytes(), Some(&value[..])))
        .collect();
    // the entries' own copies in the buffer, and the batch above, are on the heap either way
    let before = HEAP.load(Ordering::SeqCst);
    e.write_batch(&batch).unwrap();
    e.put(b"small again", b"x").unwrap();
    let grew = HEAP.load(Ordering::SeqCst).saturating_sub(before);
    // 16 MiB of values held by the buffer, plus its index; a kept 16 MiB scratch would double it
    assert!(
        grew < 24 << 20,
        "the heap grew by {} MiB over a 16 MiB batch",
        grew >> 20
    );
    e.close().unwrap();
}

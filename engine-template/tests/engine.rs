//! Engine behaviour at a scale that builds several levels, on every shape: contents, shape, I/O counts,
//! memory, concurrency, limits and design changes.

mod common;

use cosine_engine::{Design, Engine, Error, Options, SyncMode};
use rand::seq::SliceRandom;
use rand::SeedableRng;
use std::sync::Arc;

fn key(i: u32) -> Vec<u8> {
    format!("user{:08}", (i as u64 * 2_654_435_761) % 100_000_000).into_bytes()
}

fn value(i: u32, round: u32) -> Vec<u8> {
    format!("value-{i}-{round}-{}", "x".repeat((i % 40) as usize)).into_bytes()
}

fn fill(e: &Engine, n: u32) {
    let mut order: Vec<u32> = (0..n).collect();
    order.shuffle(&mut rand::rngs::StdRng::seed_from_u64(7));
    for &i in &order {
        e.put(&key(i), &value(i, 0)).unwrap();
    }
    for i in (0..n).step_by(3) {
        e.put(&key(i), &value(i, 1)).unwrap();
    }
    for i in (0..n).step_by(5) {
        e.delete(&key(i)).unwrap();
    }
}

/// The test design of the shape `name`.
fn shape(name: &str) -> Design {
    common::shapes()
        .into_iter()
        .find(|(n, _)| *n == name)
        .map(|(_, d)| d)
        .expect("a shape of tests/common")
}

/// Loads `n` keys into `dir` (`fill`), flushed and compacted.
fn settled(dir: &std::path::Path, design: &Design, n: u32) -> Engine {
    let e = common::open_unsynced(dir, design).unwrap();
    fill(&e, n);
    e.flush().unwrap();
    e.wait_for_compactions().unwrap();
    e
}

fn expected(i: u32) -> Option<Vec<u8>> {
    if i.is_multiple_of(5) {
        None
    } else if i.is_multiple_of(3) {
        Some(value(i, 1))
    } else {
        Some(value(i, 0))
    }
}

#[test]
fn every_shape_holds_its_data_and_its_shape() {
    let n = 6000;
    for (name, design) in common::shapes() {
        let dir = tempfile::tempdir().unwrap();
        let e = common::open_unsynced(dir.path(), &design).unwrap();
        fill(&e, n);
        e.flush().unwrap();
        e.wait_for_compactions().unwrap();
        for i in 0..n {
            assert_eq!(e.get(&key(i)).unwrap(), expected(i), "{name}: key {i}");
        }
        let all = e.scan(.., usize::MAX).unwrap();
        assert_eq!(
            all.len(),
            (0..n).filter(|i| expected(*i).is_some()).count(),
            "{name}"
        );
        assert!(
            all.windows(2).all(|w| w[0].0 < w[1].0),
            "{name}: scan out of order"
        );
        let s = e.stats();
        let depth = s.levels.len();
        match name {
            "lsh-like" | "lsh-append-only" => {
                assert_eq!(depth, 1, "{name}: one level that never fills")
            }
            _ => assert!(depth >= 2, "{name}: {depth} levels"),
        }
        if name == "btree-like" || name == "hybrid" {
            assert!(
                s.levels.iter().any(|l| !l.hot),
                "{name}: expected cold levels: {:?}",
                s.levels
            );
            assert!(
                s.index_reads() > 0,
                "{name}: cold levels are reached through on-disk index blocks"
            );
        } else {
            assert!(s.levels.iter().all(|l| l.hot), "{name}: {:?}", s.levels);
        }
        for l in &s.levels {
            let limit = if l.level == depth || !l.hot {
                design.cold_runs
            } else {
                design.hot_runs
            };
            assert!(
                l.runs as u64 <= limit,
                "{name}: level {} has {} runs > {limit}",
                l.level,
                l.runs
            );
        }
        if design.threads > 1 && name != "lsh-like" {
            assert!(
                s.subcompactions > 0,
                "{name}: no merge was cut into key ranges"
            );
        }
        assert!(
            s.write_amplification >= 1.0,
            "{name}: {}",
            s.write_amplification
        );
        assert!(
            s.memory.fence_bytes as u64 <= design.fence_bytes + 16 * 1024,
            "{name}: {:?}",
            s.memory
        );
        if design.filter_bytes > 0 {
            // lookups probe filters wherever a hot level holds data with filters in memory (a hybrid's may all sit
            // cold after compaction, and a compaction output gets no filter when M_BF cannot pay its header)
            if s.levels.iter().any(|l| l.hot && l.entries > 0) && s.memory.filter_bytes > 0 {
                assert!(s.filter_probes() > 0, "{name}");
            }
            // new files' bits are capped by what M_BF has left; a flush and a compaction sizing filters at the
            // same moment can overshoot a little
            assert!(
                s.memory.filter_bytes as u64 <= design.filter_bytes * 5 / 4 + 512,
                "{name}: {:?}",
                s.memory
            );
        }
        let held = (s.memory.buffer_bytes + s.memory.filter_bytes + s.memory.fence_bytes) as u64;
        assert!(
            held <= s.memory.budget_bytes + 16 * 1024,
            "{name}: {:?}",
            s.memory
        );
        drop(e);
        // reopen: the same answers from the recovered tree
        let e = Engine::open(dir.path(), &design).unwrap();
        for i in (0..n).step_by(7) {
            assert_eq!(
                e.get(&key(i)).unwrap(),
                expected(i),
                "{name} after reopen: key {i}"
            );
        }
        e.close().unwrap();
    }
}

#[test]
fn lsm_lookups_cost_about_one_block_and_misses_about_the_fpr() {
    let (_, mut design) = common::shapes().into_iter().next().unwrap();
    design.filter_bytes = 64 << 10; // plenty: ~10+ bits per key
    let dir = tempfile::tempdir().unwrap();
    let e = common::open_unsynced(dir.path(), &design).unwrap();
    let n = 5000;
    for i in 0..n {
        e.put(&key(i), &value(i, 0)).unwrap();
    }
    e.flush().unwrap();
    e.wait_for_compactions().unwrap();
    let before = e.stats();
    for i in 0..n {
        assert!(e.get(&key(i)).unwrap().is_some());
    }
    let hits = e.stats();
    let per_hit = (hits.block_reads() - before.block_reads()) as f64 / n as f64;
    assert!(
        (1.0..1.1).contains(&per_hit),
        "a hit costs {per_hit} block reads"
    );
    for i in 0..n {
        assert!(e.get(format!("miss{i:08}").as_bytes()).unwrap().is_none());
    }
    let misses = e.stats();
    let per_miss = (misses.block_reads() - hits.block_reads()) as f64 / n as f64;
    assert!(per_miss < 0.05, "a miss costs {per_miss} block reads");
    assert_eq!(
        misses.block_reads() - hits.block_reads(),
        misses.false_positives() - hits.false_positives()
    );
}

#[test]
fn concurrent_readers_and_writers() {
    let (_, design) = common::shapes().into_iter().next().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let e = Arc::new(Engine::open(dir.path(), &design).unwrap());
    let threads: Vec<_> = (0..4u32)
        .map(|t| {
            let e = e.clone();
            std::thread::spawn(move || {
                for i in 0..1500u32 {
                    let k = format!("t{t}-{i:06}");
                    e.put(k.as_bytes(), &i.to_le_bytes()).unwrap();
                    if i % 10 == 0 {
                        let back = e.get(k.as_bytes()).unwrap();
                        assert_eq!(back.as_deref(), Some(&i.to_le_bytes()[..]));
                    }
                    if i % 97 == 0 {
                        e.read_modify_write(b"counter", |old| {
                            let c = old
                                .map(|o| u64::from_le_bytes(o.try_into().unwrap()))
                                .unwrap_or(0);
                            Some((c + 1).to_le_bytes().to_vec())
                        })
                        .unwrap();
                    }
                }
            })
        })
        .collect();
    let readers: Vec<_> = (0..2)
        .map(|_| {
            let e = e.clone();
            std::thread::spawn(move || {
                for _ in 0..50 {
                    let s = e.scan(b"t0-".to_vec()..b"t0-~".to_vec(), 100).unwrap();
                    assert!(s.windows(2).all(|w| w[0].0 < w[1].0));
                }
            })
        })
        .collect();
    for t in threads.into_iter().chain(readers) {
        t.join().unwrap();
    }
    let c = e.get(b"counter").unwrap().unwrap();
    assert_eq!(
        u64::from_le_bytes(c.try_into().unwrap()),
        4 * 16,
        "every rmw counted exactly once"
    );
    for t in 0..4 {
        assert_eq!(
            e.scan(
                format!("t{t}-").into_bytes()..format!("t{t}-~").into_bytes(),
                usize::MAX
            )
            .unwrap()
            .len(),
            1500
        );
    }
    // writers fill the buffer outside the log's lock, across hundreds of freezes of a 1 KiB buffer: every
    // acknowledged write is still there after a reopen (from the flushed runs and the replayed log)
    Arc::try_unwrap(e).ok().unwrap().close().unwrap();
    let e = Engine::open(dir.path(), &design).unwrap();
    for t in 0..4u32 {
        for i in 0..1500u32 {
            let k = format!("t{t}-{i:06}");
            assert_eq!(
                e.get(k.as_bytes()).unwrap().as_deref(),
                Some(&i.to_le_bytes()[..]),
                "{k}"
            );
        }
    }
}

#[test]
fn limits_are_typed_errors() {
    let dir = tempfile::tempdir().unwrap();
    let e = Engine::open(dir.path(), &Design::rocksdb_like(1 << 16, 1 << 10, 1 << 16)).unwrap();
    let big_key = vec![0u8; 64 * 1024 + 1];
    assert!(matches!(
        e.put(&big_key, b"v"),
        Err(Error::KeyTooLarge(65537))
    ));
    assert!(matches!(e.get(&big_key), Err(Error::KeyTooLarge(_))));
    e.put(&vec![1u8; 64 * 1024], b"max key").unwrap();
    assert_eq!(
        e.get(&vec![1u8; 64 * 1024]).unwrap().as_deref(),
        Some(&b"max key"[..])
    );
    let mut bad = Design::rocksdb_like(1 << 16, 0, 0);
    bad.hot_runs = 10;
    assert!(matches!(
        Engine::open(tempfile::tempdir().unwrap().path(), &bad),
        Err(Error::InvalidDesign(_))
    ));
}

#[test]
fn a_directory_opens_once() {
    let dir = tempfile::tempdir().unwrap();
    let d = Design::rocksdb_like(1 << 16, 1 << 10, 1 << 16);
    let e = Engine::open(dir.path(), &d).unwrap();
    assert!(matches!(
        Engine::open(dir.path(), &d),
        Err(Error::Locked(_))
    ));
    e.close().unwrap();
    Engine::open(dir.path(), &d).unwrap().close().unwrap();
}

#[test]
fn reopening_with_another_design_adapts() {
    let shapes = common::shapes();
    let dir = tempfile::tempdir().unwrap();
    let e = Engine::open(dir.path(), &shapes[0].1).unwrap();
    fill(&e, 2000);
    e.close().unwrap();
    for (name, d) in &shapes[1..] {
        let e = Engine::open(dir.path(), d).unwrap();
        assert!(e.stats().adapted_from.is_some(), "{name}");
        for i in 0..2000 {
            assert_eq!(e.get(&key(i)).unwrap(), expected(i), "{name}: key {i}");
        }
        e.put(b"after", name.as_bytes()).unwrap();
        e.flush().unwrap();
        e.wait_for_compactions().unwrap();
        assert_eq!(e.get(b"after").unwrap().as_deref(), Some(name.as_bytes()));
        e.close().unwrap();
    }
}

#[test]
fn scans_page_past_buffered_tombstones() {
    // Every shape: 500 keys on disk, then the first 300 deleted in the (large) buffer. A scan with a limit of
    // 10 must page through the buffer's tombstones (more than one chunk) to find the live keys behind them.
    for (name, design) in common::shapes() {
        let dir = tempfile::tempdir().unwrap();
        let mut d = design.clone();
        d.buffer_bytes = d.buffer_bytes.max(1 << 20);
        let e = Engine::open(dir.path(), &d).unwrap();
        let k = |i: u32| format!("k{i:05}").into_bytes();
        for i in 0..500 {
            e.put(&k(i), b"on disk").unwrap();
        }
        e.flush().unwrap();
        for i in 0..300 {
            e.delete(&k(i)).unwrap();
        }
        e.put(&k(400), b"newer").unwrap();
        let got = e.scan(.., 10).unwrap();
        let keys: Vec<Vec<u8>> = got.iter().map(|(k, _)| k.clone()).collect();
        assert_eq!(keys, (300..310).map(k).collect::<Vec<_>>(), "{name}");
        let tail = e.scan(k(395)..k(402), 100).unwrap();
        assert_eq!(tail.len(), 7, "{name}");
        assert_eq!(tail[5], (k(400), b"newer".to_vec()), "{name}");
        e.close().unwrap();
    }
}

#[test]
fn fences_stay_in_memory_run_by_run_within_m_fp() {
    // three flushed runs at level 1 over disjoint key ranges, and fence memory for about two of them: the
    // two newest keep their fences, the oldest is read through its on-disk index; the level stays hot
    let dir = tempfile::tempdir().unwrap();
    let design = Design {
        block_bytes: 4096,
        file_bytes: 64 << 20,
        ..Design::tiered(10, 1 << 20, 64 << 10, 3_000)
    };
    let e = common::open_unsynced(dir.path(), &design).unwrap();
    let k = |run: u32, i: u32| format!("run{run}-key{i:05}").into_bytes();
    for run in 0..3 {
        for i in 0..1000 {
            e.put(&k(run, i), &[b'v'; 100]).unwrap();
        }
        e.flush().unwrap();
    }
    e.wait_for_compactions().unwrap();
    let s = e.stats();
    assert_eq!(s.levels.len(), 1, "{:?}", s.levels);
    let l1 = &s.levels[0];
    assert_eq!((l1.runs, l1.resident_runs, l1.hot), (3, 2, true), "{l1:?}");
    assert!(
        s.memory.fence_bytes as u64 <= design.fence_bytes + 1024,
        "{:?}",
        s.memory
    );
    let cost = |key: &[u8]| {
        let before = e.stats();
        assert!(e.get(key).unwrap().is_some());
        let after = e.stats();
        (
            after.block_reads() - before.block_reads(),
            after.index_reads() - before.index_reads(),
        )
    };
    assert_eq!(cost(&k(2, 500)), (1, 0), "newest run: fences in memory");
    assert_eq!(cost(&k(1, 500)), (1, 0), "second run: fences in memory");
    assert_eq!(cost(&k(0, 500)), (1, 1), "oldest run: index block on disk");
}

#[test]
fn lsh_hash_indexes_stay_within_m_fp() {
    let n = 6000;
    let mut design = shape("lsh-like");
    // a few runs of 64 KiB flushes, and room for the index entries (8 bytes a key) of about a third of them
    design.buffer_bytes = 128 << 10;
    design.fence_bytes = 24 << 10;
    design.file_bytes = 32 << 10;
    let dir = tempfile::tempdir().unwrap();
    let e = settled(dir.path(), &design, n);
    let before = e.stats();
    for i in 0..n {
        assert_eq!(e.get(&key(i)).unwrap(), expected(i), "key {i}");
    }
    let s = e.stats();
    // within M_FP, plus the files' top indexes (one fence per index block, resident hot or cold)
    assert!(
        s.memory.fence_bytes as u64 <= design.fence_bytes + 4 * 1024,
        "{:?} {:?}",
        s.memory,
        s.levels
    );
    // the newest runs keep their hash index, the oldest are cold
    let l = &s.levels[0];
    assert!(l.resident_runs > 0 && l.resident_runs < l.runs, "{l:?}");
    assert!(s.memory.fence_bytes > 0, "the newest runs stay resident");
    // the runs past M_FP are read through their on-disk index blocks
    assert!(s.index_reads() > before.index_reads(), "{:?}", s.levels);
    drop(e);
    let e = Engine::open(dir.path(), &design).unwrap();
    for i in (0..n).step_by(7) {
        assert_eq!(
            e.get(&key(i)).unwrap(),
            expected(i),
            "after reopen: key {i}"
        );
    }
}

#[test]
fn a_run_larger_than_m_fp_keeps_the_fences_of_the_files_that_fit() {
    let n = 6000;
    let mut design = shape("rocksdb-like");
    // measure the fences of the settled tree with room for all of them
    let dir = tempfile::tempdir().unwrap();
    let e = settled(dir.path(), &design, n);
    let all = e.stats().memory.fence_bytes as u64;
    e.close().unwrap();
    // reopen with room for about half of them: part of the last run stays hot, not none of it
    design.fence_bytes = all / 2;
    let e = Engine::open(dir.path(), &design).unwrap();
    let before = e.stats();
    for i in 0..n {
        assert_eq!(e.get(&key(i)).unwrap(), expected(i), "key {i}");
    }
    let s = e.stats();
    assert!(
        s.memory.fence_bytes as u64 <= design.fence_bytes + 4 * 1024,
        "{:?}",
        s.memory
    );
    let index_reads = (s.index_reads() - before.index_reads()) as f64 / n as f64;
    assert!(
        index_reads > 0.1 && index_reads < 0.9,
        "index blocks per lookup {index_reads}: {:?}",
        s.levels
    );
}

#[test]
fn restarts_keep_the_active_buffer_active() {
    // every restart replays the log into the buffers it held; the active one must stay active (its segment
    // goes on taking writes), not turn into a frozen buffer flushed as a tiny run at each restart
    for (name, mut design) in common::shapes() {
        // room for every write of the test: nothing fills a buffer
        design.buffer_bytes = 1 << 20;
        let dir = tempfile::tempdir().unwrap();
        for round in 0..5u32 {
            let e = Engine::open_with(dir.path(), &design, Options::with_sync(SyncMode::Batch))
                .unwrap();
            for i in 0..10u32 {
                e.put(&key(round * 10 + i), &value(i, round)).unwrap();
            }
            e.close().unwrap();
        }
        let e =
            Engine::open_with(dir.path(), &design, Options::with_sync(SyncMode::Batch)).unwrap();
        e.wait_for_compactions().unwrap();
        let runs: usize = e.stats().levels.iter().map(|l| l.runs).sum();
        assert_eq!(
            runs, 0,
            "{name}: 50 small writes over 5 restarts were flushed into {runs} runs"
        );
        for round in 0..5u32 {
            for i in 0..10u32 {
                assert_eq!(
                    e.get(&key(round * 10 + i)).unwrap(),
                    Some(value(i, round)),
                    "{name}"
                );
            }
        }
        e.close().unwrap();
        let segments = std::fs::read_dir(dir.path())
            .unwrap()
            .filter(|f| {
                f.as_ref()
                    .unwrap()
                    .path()
                    .extension()
                    .is_some_and(|x| x == "wal")
            })
            .count();
        assert_eq!(segments, 1, "{name}: one buffer's records in one segment");
    }
}

/// Block reads of looking up the `newest` keys written last (of `n`), after a load of `n` keys and a flush,
/// and the heap bytes the buffers held at their peak while loading.
fn newest_lookups(design: &Design, n: u32, newest: u32) -> (u64, usize) {
    let dir = tempfile::tempdir().unwrap();
    let e = common::open_unsynced(dir.path(), design).unwrap();
    let mut peak = 0;
    for i in 0..n {
        e.put(&key(i), &value(i, 0)).unwrap();
        if i % 64 == 0 {
            peak = peak.max(e.stats().memory.buffer_bytes);
        }
    }
    e.flush().unwrap();
    e.wait_for_compactions().unwrap();
    peak = peak.max(e.stats().memory.buffer_bytes);
    let before = e.stats().block_reads();
    for i in n - newest..n {
        assert_eq!(e.get(&key(i)).unwrap(), Some(value(i, 0)), "key {i}");
    }
    let reads = e.stats().block_reads() - before;
    // every other key is still there, from the runs
    for i in (0..n - newest).step_by(13) {
        assert_eq!(e.get(&key(i)).unwrap(), Some(value(i, 0)), "key {i}");
    }
    e.close().unwrap();
    (reads, peak)
}

#[test]
fn the_hybrid_logs_read_only_region_answers_the_newest_flushed_records_from_memory() {
    use cosine_design::LogKind;
    let buffer = 64u64 << 10;
    let hybrid = Design::lsh_like(buffer, 1 << 20);
    assert_eq!(hybrid.log, LogKind::Hybrid);
    let mut append_only = hybrid.clone();
    append_only.log = LogKind::AppendOnly;
    let mut quarter = hybrid.clone();
    quarter.mutable_fraction = 0.25;
    let (n, newest) = (6000, 100);
    let (hybrid_reads, hybrid_peak) = newest_lookups(&hybrid, n, newest);
    let (append_reads, append_peak) = newest_lookups(&append_only, n, newest);
    // the newest records were flushed (the flush above), yet the read-only region still answers them
    assert_eq!(hybrid_reads, 0, "hybrid log");
    // an append-only log dropped its flushed buffer: each of them costs its block
    assert!(
        append_reads >= u64::from(newest),
        "append-only log: {append_reads} block reads for {newest} lookups"
    );
    // M_B bounds the mutable region, the frozen one and the read-only region together (plus the entry a full
    // buffer overshoots by)
    for (name, peak) in [("hybrid", hybrid_peak), ("append-only", append_peak)] {
        assert!(
            peak as u64 <= buffer + 1024,
            "{name}: the buffers held {peak} bytes of M_B = {buffer}"
        );
    }
    // a smaller mutable fraction leaves more of M_B to the read-only region: more of the newest records in
    // memory after the flush
    let many = 1200;
    let (half, _) = newest_lookups(&hybrid, n, many);
    let (quarter_reads, quarter_peak) = newest_lookups(&quarter, n, many);
    assert!(
        quarter_reads < half,
        "mutable fraction 1/4: {quarter_reads} block reads, 1/2: {half}"
    );
    assert!(quarter_peak as u64 <= buffer + 1024, "{quarter_peak}");
}

/// The hybrid log's read-only region is trimmed, oldest records first, as frozen buffers take its memory: after a
/// trim it may keep nothing older than what it dropped, or a key updated (or deleted) in the dropped part would
/// be answered by an older buffer's version. Flushes of every size (a partly full buffer frees part of the
/// region) over a few hot keys, each state checked against a `BTreeMap`, with both buffer kinds.
#[test]
fn a_trimmed_read_only_region_never_answers_with_an_older_version() {
    use cosine_engine::parts::{BufferKind, Parts};
    use std::collections::BTreeMap;
    for buffer in [BufferKind::HashLog, BufferKind::Sorted] {
        let mut design = Design::lsh_like(8 << 10, 1 << 20);
        design.block_bytes = 512;
        let mut parts = Parts::of(&design);
        parts.buffer = buffer;
        assert!(parts.read_only_region);
        let dir = tempfile::tempdir().unwrap();
        let options = Options {
            parts: Some(parts),
            ..Options::with_sync(SyncMode::Never)
        };
        let e = Engine::open_with(dir.path(), &design, options).unwrap();
        let mut model: BTreeMap<Vec<u8>, Vec<u8>> = BTreeMap::new();
        let mut rng = rand::rngs::StdRng::seed_from_u64(7);
        use rand::Rng;
        for round in 0..300u32 {
            // a batch of 1 to 60 writes over 40 hot keys and a few cold ones, then a flush of whatever it holds
            for _ in 0..rng.random_range(1..60) {
                let k = if rng.random_bool(0.8) {
                    format!("hot{:02}", rng.random_range(0..40))
                } else {
                    format!("cold{:06}", rng.random_range(0..100_000))
                };
                if rng.random_bool(0.15) {
                    e.delete(k.as_bytes()).unwrap();
                    model.remove(k.as_bytes());
                } else {
                    let v = format!("{round}-{}", "v".repeat(rng.random_range(1..120)));
                    e.put(k.as_bytes(), v.as_bytes()).unwrap();
                    model.insert(k.into_bytes(), v.into_bytes());
                }
            }
            e.flush().unwrap();
            for i in 0..40 {
                let k = format!("hot{i:02}");
                assert_eq!(
                    e.get(k.as_bytes()).unwrap(),
                    model.get(k.as_bytes()).cloned(),
                    "{buffer:?} round {round}: {k}"
                );
            }
        }
        e.close().unwrap();
    }
}

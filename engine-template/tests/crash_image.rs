//! Machine crashes, simulated: every shape runs a random workload on an in-memory file system that keeps only
//! what was synced ([`MemFs`]), is crashed at the k-th storage call (in a write, a flush, a compaction, a
//! manifest install, a log rotation or a restart's recovery), and is opened again from the crash image, with or
//! without a torn tail of unsynced bytes. A process kill (`tests/crash.rs`) cannot show this: the page cache
//! survives it.
//!
//! After each crash the store must open, and its contents (by gets, scans and a snapshot, which must agree)
//! must equal the workload's after some prefix of its operations (a batch is one operation: never half there). Under `always` and `batch` that prefix holds every
//! acknowledged operation; under `never` it may stop short of them (a machine crash may lose what was not
//! fsynced, though not what a `flush` made durable), never with a hole. One life in four ends in a process kill
//! instead (the machine stays up, so everything written is there, and must be: nothing acknowledged is lost),
//! and the next crash keeps only what was durable and what the restart synced. Each lineage crashes three
//! times over, so recovery from a recovered store is crashed too.
//!
//! A crash image keeps only what was synced, or also a torn tail of the unsynced bytes, or is the harsh one
//! ([`MemFs::recover_harsh`]: out-of-order write-back's holes of zeros or garbage, torn sectors, files grown past
//! their data, unsynced names that survive), a third of the crashes each; an append the crash interrupts
//! leaves part of its bytes.
//!
//! 12 crash points per shape and sync mode run by default (180 lineages), and 30 crashes of three concurrent
//! writers sharing group commits;
//! `cargo test -p cosine-engine --release --test crash_image -- --ignored` runs 200 per shape and mode.

mod common;

use cosine_design::Design;
use cosine_engine::storage::{Failing, FaultKind, MemFs, Storage};
use cosine_engine::{Engine, Options, SyncMode};
use rand::{Rng, SeedableRng};
use std::collections::BTreeMap;
use std::path::Path;

const KEYS: u32 = 400;
const DIR: &str = "/db";

/// One operation: puts and deletes on several keys at once (a batch when more than one).
type Op = Vec<(Vec<u8>, Option<Vec<u8>>)>;

fn key(i: u32) -> Vec<u8> {
    format!("key{i:04}").into_bytes()
}

fn workload(seed: u64, n: usize) -> Vec<Op> {
    let mut rng = rand::rngs::StdRng::seed_from_u64(seed);
    (0..n)
        .map(|i| {
            let width = if rng.random_bool(0.1) {
                rng.random_range(2..5)
            } else {
                1
            };
            (0..width)
                .map(|_| {
                    let k = key(rng.random_range(0..KEYS));
                    let v = (!rng.random_bool(0.15)).then(|| {
                        let len = rng.random_range(1..160);
                        let mut v = format!("op{i}-").into_bytes();
                        v.resize(len.max(v.len()), b'x');
                        v
                    });
                    (k, v)
                })
                .collect()
        })
        .collect()
}

fn options(fs: &MemFs, sync: SyncMode) -> Options {
    Options {
        sync,
        storage: Storage::new(fs.clone()),
        ..Options::default()
    }
}

fn apply(engine: &Engine, op: &Op) -> cosine_engine::Result<()> {
    match op.as_slice() {
        [(k, Some(v))] => engine.put(k, v),
        [(k, None)] => engine.delete(k),
        many => {
            let batch: Vec<(&[u8], Option<&[u8]>)> = many
                .iter()
                .map(|(k, v)| (k.as_slice(), v.as_deref()))
                .collect();
            engine.write_batch(&batch)
        }
    }
}

/// Runs `ops` until one fails; returns how many were acknowledged, and how many of them a successful
/// `flush` made durable whatever the sync mode (every 200th op is followed by a flush).
fn run(engine: &Engine, ops: &[Op]) -> (usize, usize) {
    let mut flushed = 0;
    for (i, op) in ops.iter().enumerate() {
        if apply(engine, op).is_err() {
            return (i, flushed);
        }
        if i % 200 == 199 {
            if engine.flush().is_err() {
                return (i + 1, flushed);
            }
            flushed = i + 1;
        }
    }
    (ops.len(), flushed)
}

/// What the reopened store holds for every key of the workload's key space, read by `get`; a scan of the whole
/// store, a scan of part of it and a snapshot's scan must say the same.
fn read_all(engine: &Engine) -> BTreeMap<Vec<u8>, Vec<u8>> {
    let got: BTreeMap<Vec<u8>, Vec<u8>> = (0..KEYS)
        .filter_map(|i| {
            let k = key(i);
            engine
                .get(&k)
                .unwrap_or_else(|e| panic!("a read after recovery failed: {e}"))
                .map(|v| (k, v))
        })
        .collect();
    let scanned: BTreeMap<Vec<u8>, Vec<u8>> = engine
        .scan(.., usize::MAX)
        .unwrap_or_else(|e| panic!("a scan after recovery failed: {e}"))
        .into_iter()
        .collect();
    assert_eq!(
        scanned, got,
        "a scan after recovery disagrees with the gets"
    );
    let (lo, hi) = (key(KEYS / 4), key(3 * KEYS / 4));
    let part: Vec<(Vec<u8>, Vec<u8>)> = engine
        .scan(lo.clone()..hi.clone(), usize::MAX)
        .unwrap_or_else(|e| panic!("a range scan after recovery failed: {e}"));
    let want: Vec<(Vec<u8>, Vec<u8>)> = got
        .range(lo..hi)
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    assert_eq!(
        part, want,
        "a range scan after recovery disagrees with the gets"
    );
    let snap = engine
        .snapshot()
        .unwrap_or_else(|e| panic!("a snapshot after recovery failed: {e}"));
    let seen: BTreeMap<Vec<u8>, Vec<u8>> = snap
        .scan(.., usize::MAX)
        .unwrap_or_else(|e| panic!("a snapshot's scan after recovery failed: {e}"))
        .into_iter()
        .collect();
    assert_eq!(
        seen, got,
        "a snapshot after recovery disagrees with the gets"
    );
    got
}

/// The `p` in `lo..=hi` such that `base` with `ops[..p]` applied equals `found`, if there is one.
fn matching_prefix(
    base: &BTreeMap<Vec<u8>, Vec<u8>>,
    ops: &[Op],
    found: &BTreeMap<Vec<u8>, Vec<u8>>,
    lo: usize,
    hi: usize,
) -> Option<usize> {
    let mut model = base.clone();
    // keys where the model and the store differ
    let mut diff: usize = (0..KEYS)
        .map(key)
        .filter(|k| model.get(k) != found.get(k))
        .count();
    for p in 0..=hi {
        if p >= lo && diff == 0 {
            return Some(p);
        }
        let Some(op) = ops.get(p) else { break };
        for (k, v) in op {
            let before = model.get(k) != found.get(k);
            match v {
                Some(v) => model.insert(k.clone(), v.clone()),
                None => model.remove(k),
            };
            let after = model.get(k) != found.get(k);
            diff = diff + after as usize - before as usize;
        }
    }
    None
}

/// One lineage: three crashes at random storage calls (within `calls` of the start of each life), each
/// followed by recovery from the crash image and a check of what survived.
fn lineage(shape: &str, design: &Design, sync: SyncMode, seed: u64, calls: u64) {
    let mut rng = rand::rngs::StdRng::seed_from_u64(seed);
    let ops = workload(seed, 1500);
    let mut fs = MemFs::new();
    let mut base = BTreeMap::new();
    let mut done = 0usize;
    for life in 0..3 {
        let k = rng.random_range(0..calls);
        // the crash image: only what was synced, a torn tail, or the harsh one (holes, garbage, torn sectors,
        // grown files, unsynced names that survive)
        let image = rng.random_range(0..3u32);
        let image_seed: u64 = rng.random();
        // one life in four ends in a process kill (the machine stays up) instead of a machine crash
        let killed = rng.random_bool(0.25);
        let ctx = format!(
            "{shape} {sync:?} seed {seed} life {life} crash after {k} calls (image {image}, seed {image_seed}, killed {killed})"
        );
        // an append the crash interrupts leaves part of its bytes
        fs.crash_after_seeded(k, image_seed);
        let rest = &ops[done..];
        let (acked, flushed) = match Engine::open_with(DIR, design, options(&fs, sync)) {
            Ok(engine) => {
                let (acked, flushed) = run(&engine, rest);
                // an operation fails only because the storage crashed: any other error is a bug
                assert!(
                    acked == rest.len() || fs.crashed(),
                    "{ctx}: operation {acked} failed without a crash"
                );
                fs.crash();
                drop(engine);
                (acked, flushed)
            }
            // the crash hit the opening itself
            Err(e) => {
                assert!(
                    fs.crashed(),
                    "{ctx}: the opening failed without a crash: {e}"
                );
                (0, 0)
            }
        };
        fs = if killed {
            // the process was killed and the machine stayed up: the next life starts from everything written,
            // and a crash in it keeps only what was durable before and what it syncs (the opening's fsyncs of
            // the directory and the live log segments)
            fs.restart()
        } else {
            match image {
                0 => fs.recover(),
                1 => fs.recover_torn(|_, unsynced| rng.random_range(0..=unsynced)),
                _ => fs.recover_harsh(image_seed),
            }
        };
        let engine = Engine::open_with(DIR, design, options(&fs, sync))
            .unwrap_or_else(|e| panic!("{ctx}: the crash image does not open: {e}"));
        let found = read_all(&engine);
        let attempted = (acked + 1).min(rest.len());
        let lo = match sync {
            // a process kill loses nothing acknowledged, in any mode
            _ if killed => acked,
            SyncMode::Always | SyncMode::Batch => acked,
            // a machine crash may lose what was not fsynced, but not what a flush made durable
            SyncMode::Never => flushed,
        };
        let Some(p) = matching_prefix(&base, rest, &found, lo, attempted) else {
            panic!(
                "{ctx}: after {acked} acknowledged operations the store holds no prefix of them from {lo} \
                 to {attempted}"
            )
        };
        engine
            .close()
            .unwrap_or_else(|e| panic!("{ctx}: close: {e}"));
        base = found;
        done += p;
    }
}

/// Storage calls a full run of the workload makes, so crash points spread over all of it.
fn calls_of_a_full_run(design: &Design, sync: SyncMode, seed: u64) -> u64 {
    let fs = MemFs::new();
    let engine = Engine::open_with(Path::new(DIR), design, options(&fs, sync)).unwrap();
    assert_eq!(run(&engine, &workload(seed, 1500)).0, 1500);
    engine.close().unwrap();
    fs.calls()
}

fn crash_everywhere(lineages: u64, seed: u64) {
    for (shape, design) in common::shapes() {
        for sync in [SyncMode::Always, SyncMode::Batch, SyncMode::Never] {
            let calls = calls_of_a_full_run(&design, sync, seed);
            for l in 0..lineages {
                lineage(shape, &design, sync, seed + l, calls);
            }
        }
    }
}

#[test]
fn every_shape_survives_crashes_at_random_storage_calls() {
    crash_everywhere(12, 1);
}

#[test]
#[ignore = "long (about 6-11 min): 200 lineages per shape and sync mode; cargo test -p cosine-engine --release --test crash_image -- --ignored"]
fn crash_image_3000() {
    crash_everywhere(200, 1000);
}

/// A fault, then a power loss: the storage fails one call (an fsync, an append cut short by a full disk, a
/// create, a rename, a directory sync: of the log, a run or the manifest, in a write or in the background), the
/// engine reports it
/// or is poisoned by it, and then the machine crashes. The harsh crash image opens with every operation that
/// was acknowledged, and no hole.
#[test]
fn a_fault_then_a_power_loss_loses_nothing_acknowledged() {
    let kinds = [
        FaultKind::Sync,
        FaultKind::Append,
        FaultKind::Create,
        FaultKind::Rename,
        FaultKind::SyncDir,
    ];
    let (mut cases, mut faults, mut cut_short) = (0, 0, 0);
    for (shape, design) in common::shapes() {
        for (i, &kind) in kinds.iter().enumerate() {
            for sync in [SyncMode::Always, SyncMode::Batch] {
                let seed = 1000 + 10 * i as u64 + u64::from(sync == SyncMode::Batch);
                let mut rng = rand::rngs::StdRng::seed_from_u64(seed);
                let nth = rng.random_range(2..60);
                let ctx = format!("{shape} {sync:?} {kind:?} fault at call {nth}, seed {seed}");
                let fs = MemFs::new();
                let mut failing = Failing::over(fs.clone(), kind, nth, true);
                if kind == FaultKind::Append {
                    // a short write on a full disk: half the bytes reach the file
                    failing = failing.short_writes().no_space();
                }
                let failing = std::sync::Arc::new(failing);
                let opts = Options {
                    sync,
                    storage: Storage::new(failing.clone()),
                    ..Options::default()
                };
                let ops = workload(seed, 1500);
                let fired = || failing.calls() >= nth;
                let acked = match Engine::open_with(DIR, &design, opts) {
                    Ok(engine) => {
                        let (acked, _) = run(&engine, &ops);
                        assert!(
                            acked == ops.len() || fired(),
                            "{ctx}: operation {acked} failed without the fault"
                        );
                        fs.crash();
                        drop(engine);
                        acked
                    }
                    Err(e) => {
                        assert!(fired(), "{ctx}: the opening failed without the fault: {e}");
                        0
                    }
                };
                cases += 1;
                faults += usize::from(fired());
                cut_short += usize::from(acked < ops.len());
                let image = fs.recover_harsh(rng.random());
                let engine = Engine::open_with(DIR, &design, options(&image, sync))
                    .unwrap_or_else(|e| panic!("{ctx}: the crash image does not open: {e}"));
                let found = read_all(&engine);
                let hi = (acked + 1).min(ops.len());
                assert!(
                    matching_prefix(&BTreeMap::new(), &ops, &found, acked, hi).is_some(),
                    "{ctx}: after {acked} acknowledged operations the store holds no prefix from {acked} to {hi}"
                );
            }
        }
    }
    // most faults fire within the run, and most stop the writes (one the engine survives need not)
    assert!(
        faults * 4 >= cases * 3,
        "only {faults} of {cases} faults fired"
    );
    assert!(
        cut_short * 2 >= cases,
        "only {cut_short} of {cases} faults stopped the writes"
    );
}

/// A crash in the middle of the opening's own work (log replay, the first manifest write, the new segment)
/// leaves a store that opens.
#[test]
fn a_crash_during_recovery_leaves_a_store_that_opens() {
    let (_, design) = &common::shapes()[0];
    let fs = MemFs::new();
    let engine = Engine::open_with(DIR, design, options(&fs, SyncMode::Always)).unwrap();
    let ops = workload(7, 300);
    assert_eq!(run(&engine, &ops).0, 300);
    fs.crash();
    drop(engine);
    let image = fs.recover();
    let expected = {
        let engine =
            Engine::open_with(DIR, design, options(&image.recover(), SyncMode::Always)).unwrap();
        read_all(&engine)
    };
    let mut fired = 0;
    for k in 0..40 {
        let fs = image.recover();
        fs.crash_after(k);
        let opened = Engine::open_with(DIR, design, options(&fs, SyncMode::Always));
        if fs.crashed() {
            fired += 1;
        } else {
            // an opening that needs fewer calls than k is not crashed: it must simply work
            assert!(opened.is_ok(), "an uncrashed opening failed at k = {k}");
        }
        drop(opened);
        let engine = Engine::open_with(DIR, design, options(&fs.recover(), SyncMode::Always))
            .unwrap_or_else(|e| {
                panic!("a crash at call {k} of an opening left a store that does not open: {e}")
            });
        assert_eq!(
            read_all(&engine),
            expected,
            "crash at call {k} of an opening"
        );
    }
    assert!(fired >= 10, "only {fired} of 40 openings were crashed");
}

/// Group commit under crashes: three writers on keys of their own share the log's fsyncs, the storage crashes
/// at a random call, and after recovery each writer's keys hold a prefix of its operations that includes every
/// one it had acknowledged (under `batch` and `always`), its batches whole.
#[test]
fn concurrent_writers_survive_crashes_at_random_storage_calls() {
    let mut mid_run = 0;
    for (shape, design) in common::shapes() {
        for sync in [SyncMode::Batch, SyncMode::Always] {
            for seed in 0..3u64 {
                let mut rng = rand::rngs::StdRng::seed_from_u64(seed);
                let per: Vec<Vec<Op>> = (0..3).map(|t| workload(100 * seed + t, 600)).collect();
                let prefixed = |t: usize, op: &Op| -> Op {
                    op.iter()
                        .map(|(k, v)| {
                            (
                                [format!("t{t}-").into_bytes(), k.clone()].concat(),
                                v.clone(),
                            )
                        })
                        .collect()
                };
                let fs = MemFs::new();
                let engine = Engine::open_with(DIR, &design, options(&fs, sync)).unwrap();
                let k = rng.random_range(0..3000);
                let ctx = format!("{shape} {sync:?} seed {seed} crash after {k} calls");
                fs.crash_after_seeded(k, seed);
                let acked: Vec<usize> = std::thread::scope(|s| {
                    let handles: Vec<_> = (0..3)
                        .map(|t| {
                            let (engine, ops, prefixed) = (&engine, &per[t], &prefixed);
                            s.spawn(move || {
                                ops.iter()
                                    .position(|op| apply(engine, &prefixed(t, op)).is_err())
                                    .unwrap_or(ops.len())
                            })
                        })
                        .collect();
                    handles.into_iter().map(|h| h.join().unwrap()).collect()
                });
                assert!(
                    acked.iter().all(|a| *a == 600) || fs.crashed(),
                    "{ctx}: a write failed without a crash"
                );
                mid_run += usize::from(acked.iter().any(|a| *a < 600));
                fs.crash();
                drop(engine);
                let image = match rng.random_range(0..3u32) {
                    0 => fs.recover(),
                    1 => fs.recover_torn(|_, unsynced| rng.random_range(0..=unsynced)),
                    _ => fs.recover_harsh(rng.random()),
                };
                let engine = Engine::open_with(DIR, &design, options(&image, sync))
                    .unwrap_or_else(|e| panic!("{ctx}: the crash image does not open: {e}"));
                for (t, ops) in per.iter().enumerate() {
                    let found: BTreeMap<Vec<u8>, Vec<u8>> = (0..KEYS)
                        .filter_map(|i| {
                            let stored = [format!("t{t}-").into_bytes(), key(i)].concat();
                            engine.get(&stored).unwrap().map(|v| (key(i), v))
                        })
                        .collect();
                    let hi = (acked[t] + 1).min(ops.len());
                    assert!(
                        matching_prefix(&BTreeMap::new(), ops, &found, acked[t], hi).is_some(),
                        "{ctx}: writer {t} acknowledged {} operations; its keys hold no prefix from {} to {hi}",
                        acked[t],
                        acked[t]
                    );
                }
            }
        }
    }
    // most crashes land while the writers run, not after
    assert!(
        mid_run >= 15,
        "only {mid_run} of 30 crashes hit the writers"
    );
}

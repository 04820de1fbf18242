//! Fault injection on the log's storage: a failed fsync or write poisons the engine (every later write and
//! `close` return the error), the write it hit is never acknowledged nor visible while the engine runs (after a
//! reopen it is absent or whole: its outcome is unknown, as a failed commit's), and what was acknowledged
//! before is there after a reopen.

mod common;

use cosine_engine::storage::{Failing, FaultKind, MemFs, Storage};
use cosine_engine::{Engine, Error, Options, SyncMode};

fn faulty(sync: SyncMode, kind: FaultKind, nth: u64) -> Options {
    Options {
        sync,
        storage: Storage::new(Failing::from_nth(kind, nth)),
        ..Options::default()
    }
}

/// Only the `nth` call fails, as Linux reports a lost write-back once: the next fsync succeeds.
fn faulty_once(sync: SyncMode, kind: FaultKind, nth: u64) -> Options {
    Options {
        sync,
        storage: Storage::new(Failing::nth_only(kind, nth)),
        ..Options::default()
    }
}

/// Writes until the injected fault hits; checks what the engine shows then and after a reopen.
fn poisons(sync: SyncMode, kind: FaultKind) {
    poisons_with(sync, kind, faulty);
    poisons_with(sync, kind, faulty_once);
}

fn poisons_with(sync: SyncMode, kind: FaultKind, options: fn(SyncMode, FaultKind, u64) -> Options) {
    for (shape, design) in common::shapes() {
        let dir = tempfile::tempdir().unwrap();
        // opening creates the first segment (no sync); fail a few calls later
        let engine = Engine::open_with(dir.path(), &design, options(sync, kind, 40)).unwrap();
        let mut acked = Vec::new();
        let mut failed = None;
        for i in 0..10_000u32 {
            let key = format!("key{i:05}");
            match engine.put(key.as_bytes(), b"value") {
                Ok(()) => acked.push(key),
                Err(e) => {
                    // the write the fault hit, or the next one when it hit a log rotation after an
                    // acknowledged write
                    assert!(
                        matches!(e, Error::Io { .. } | Error::Poisoned(_)),
                        "{shape}: {e}"
                    );
                    failed = Some(key);
                    break;
                }
            }
        }
        let failed = failed.unwrap_or_else(|| panic!("{shape} {sync:?}: the fault never hit"));
        assert_eq!(
            engine.get(failed.as_bytes()).unwrap(),
            None,
            "{shape} {sync:?}: a write whose {kind:?} failed is visible"
        );
        assert!(matches!(
            engine.put(b"later", b"x"),
            Err(Error::Poisoned(_))
        ));
        assert!(matches!(engine.delete(b"later"), Err(Error::Poisoned(_))));
        assert!(matches!(
            engine.read_modify_write(b"later", |_| Some(b"y".to_vec())),
            Err(Error::Poisoned(_))
        ));
        assert_eq!(engine.get(b"later").unwrap(), None);
        assert!(
            engine.close().is_err(),
            "{shape} {sync:?}: close after a failed {kind:?} must report it"
        );
        let engine = common::open_unsynced(dir.path(), &design).unwrap();
        for key in &acked {
            assert_eq!(
                engine.get(key.as_bytes()).unwrap().as_deref(),
                Some(&b"value"[..]),
                "{shape} {sync:?}: acknowledged {key} lost after a failed {kind:?}"
            );
        }
        // the failed write was never acknowledged: its outcome is unknown, as a failed commit's is in RocksDB
        // or PostgreSQL. Its bytes may have reached the log before the fsync failed, and then a restart
        // replays it whole; it is never half there, and a write refused by the poisoned engine never is
        let after = engine.get(failed.as_bytes()).unwrap();
        assert!(
            after.is_none() || after.as_deref() == Some(&b"value"[..]),
            "{shape} {sync:?}: the failed write came back as {after:?}"
        );
        assert_eq!(engine.get(b"later").unwrap(), None, "{shape} {sync:?}");
        engine.close().unwrap();
    }
}

/// A database created in new directories survives a machine crash right after its first durable write: every
/// new directory's entry in its parent was fsynced (a crash image keeps no entry that was not).
#[test]
fn creating_a_database_fsyncs_every_new_directorys_parent() {
    let fs = MemFs::new();
    let options = Options {
        sync: SyncMode::Always,
        storage: Storage::new(fs.clone()),
        ..Options::default()
    };
    let db = std::path::Path::new("/a/b/db");
    let engine = Engine::open_with(db, &common::shapes()[0].1, options).unwrap();
    engine.put(b"k", b"v").unwrap();
    fs.crash();
    let after = Options {
        sync: SyncMode::Always,
        storage: Storage::new(fs.recover()),
        ..Options::default()
    };
    let engine = Engine::open_with(db, &common::shapes()[0].1, after).unwrap();
    assert_eq!(engine.get(b"k").unwrap().as_deref(), Some(&b"v"[..]));
}

#[test]
fn a_failed_fsync_poisons_under_batch() {
    poisons(SyncMode::Batch, FaultKind::Sync);
}

#[test]
fn a_failed_fsync_poisons_under_always() {
    poisons(SyncMode::Always, FaultKind::Sync);
}

#[test]
fn a_failed_log_write_poisons_in_every_mode() {
    for sync in [SyncMode::Always, SyncMode::Batch, SyncMode::Never] {
        poisons(sync, FaultKind::Append);
    }
}

#[test]
fn concurrent_writers_all_see_the_failure() {
    let design = common::shapes()[0].1.clone();
    let dir = tempfile::tempdir().unwrap();
    let engine = std::sync::Arc::new(
        Engine::open_with(
            dir.path(),
            &design,
            faulty(SyncMode::Batch, FaultKind::Sync, 30),
        )
        .unwrap(),
    );
    let handles: Vec<_> = (0..4)
        .map(|t| {
            let engine = engine.clone();
            std::thread::spawn(move || {
                let mut acked = Vec::new();
                for i in 0..2_000u32 {
                    let key = format!("t{t}-{i:05}");
                    if engine.put(key.as_bytes(), b"v").is_err() {
                        return (acked, Some(key));
                    }
                    acked.push(key);
                }
                (acked, None)
            })
        })
        .collect();
    let results: Vec<_> = handles.into_iter().map(|h| h.join().unwrap()).collect();
    for (_, failed) in &results {
        let failed = failed
            .as_ref()
            .expect("every writer meets the poisoned engine");
        assert_eq!(engine.get(failed.as_bytes()).unwrap(), None);
    }
    drop(engine);
    let engine = common::open_unsynced(dir.path(), &design).unwrap();
    for (acked, _) in &results {
        for key in acked {
            assert!(engine.get(key.as_bytes()).unwrap().is_some(), "{key} lost");
        }
    }
}

/// Storage failures in the background work (a run file's create, append or fsync in a flush or compaction, a
/// manifest install's rename, a directory fsync, a run file's read): the engine poisons instead of going on,
/// keeps answering reads with right values (a failed read is an error, never a wrong or missing value), and a
/// reopen on healthy storage finds every acknowledged write.
#[test]
fn a_failed_flush_or_compaction_leaves_the_store_readable_and_reopenable() {
    let cases = [
        (FaultKind::Create, ".run", 2),
        (FaultKind::Append, ".run", 3),
        (FaultKind::Sync, ".run", 2),
        (FaultKind::Rename, "MANIFEST.tmp", 2),
        (FaultKind::SyncDir, "/db", 5),
        (FaultKind::Read, ".run", 40),
        (FaultKind::Open, ".run", 3),
    ];
    for (shape, design) in common::shapes() {
        for (kind, files, nth) in cases {
            let root = tempfile::tempdir().unwrap();
            let dir = root.path().join("db");
            let failing = std::sync::Arc::new(Failing::from_nth(kind, nth).on_files(files));
            let options = Options {
                sync: SyncMode::Never,
                storage: Storage::new(failing.clone()),
                ..Options::default()
            };
            let ctx = format!("{shape}: {kind:?} of {files} from call {nth}");
            let engine = Engine::open_with(&dir, &design, options).unwrap();
            let value = |i: u32| format!("value-{i}-{}", "v".repeat((i % 40) as usize));
            // the i-th write's key: the 4,000 keys in a scattered order
            let key_of = |i: u32| format!("key{:05}", (i * 7919) % 4000);
            let mut acked = 0u32;
            let mut read_errors = 0;
            for i in 0..4000u32 {
                let key = key_of(i);
                if kind == FaultKind::Read && i % 10 == 0 {
                    // reads of written keys, which may reach the failing run files
                    for j in (0..acked).step_by(97) {
                        let k = key_of(j);
                        match engine.get(k.as_bytes()) {
                            Ok(v) => {
                                assert_eq!(v, Some(value(j).into_bytes()), "{ctx}: a wrong read")
                            }
                            Err(_) => read_errors += 1,
                        }
                    }
                }
                if engine.put(key.as_bytes(), value(i).as_bytes()).is_err() {
                    break;
                }
                acked = i + 1;
            }
            assert!(failing.calls() >= nth, "{ctx}: the fault never hit");
            if kind == FaultKind::Read {
                // a failed read reached a reader as an error, or a merge that met it poisoned the engine
                let poisoned = matches!(engine.put(b"after", b"x"), Err(Error::Poisoned(_)));
                assert!(
                    read_errors > 0 || poisoned,
                    "{ctx}: a failed read surfaced nowhere"
                );
            } else {
                // a background failure poisons the engine (the thread that met it records it at once)
                let poisoned = (0..200).any(|_| {
                    let refused = matches!(engine.put(b"after", b"x"), Err(Error::Poisoned(_)));
                    if !refused {
                        std::thread::sleep(std::time::Duration::from_millis(10));
                    }
                    refused
                });
                assert!(poisoned, "{ctx}: the engine is not poisoned");
            }
            if kind != FaultKind::Read {
                for j in 0..acked {
                    let k = key_of(j);
                    assert_eq!(
                        engine.get(k.as_bytes()).unwrap(),
                        Some(value(j).into_bytes()),
                        "{ctx}: acknowledged {k} unreadable while the engine runs"
                    );
                }
            }
            let _ = engine.close();
            let engine = common::open_unsynced(&dir, &design)
                .unwrap_or_else(|e| panic!("{ctx}: does not reopen: {e}"));
            for j in 0..acked {
                let k = key_of(j);
                assert_eq!(
                    engine.get(k.as_bytes()).unwrap(),
                    Some(value(j).into_bytes()),
                    "{ctx}: acknowledged {k} lost"
                );
            }
            engine.close().unwrap();
        }
    }
}

/// Removals that fail (obsolete run files and log segments) cost disk space, never data: the engine goes on,
/// unpoisoned, and a reopen on healthy storage clears what was left. An opening whose listing, lock or file
/// opening fails returns the error (no panic, nothing changed), and the next healthy opening finds every write.
#[test]
fn failed_removals_and_failed_openings_lose_nothing() {
    for (shape, design) in common::shapes() {
        let root = tempfile::tempdir().unwrap();
        let dir = root.path().join("db");
        let failing = std::sync::Arc::new(Failing::from_nth(FaultKind::Remove, 1));
        let options = Options {
            sync: SyncMode::Never,
            storage: Storage::new(failing.clone()),
            ..Options::default()
        };
        let engine = Engine::open_with(&dir, &design, options).unwrap();
        let value = |i: u32| format!("value-{i}-{}", "v".repeat((i % 40) as usize));
        for i in 0..3000u32 {
            let k = format!("key{:05}", (i * 7919) % 3000);
            engine.put(k.as_bytes(), value(i).as_bytes()).unwrap();
        }
        engine.flush().unwrap();
        engine.wait_for_compactions().unwrap();
        assert!(failing.calls() > 0, "{shape}: nothing was removed");
        engine.put(b"after", b"x").unwrap();
        engine.close().unwrap();
        let check = |engine: &Engine, ctx: &str| {
            for i in 0..3000u32 {
                let k = format!("key{:05}", (i * 7919) % 3000);
                assert_eq!(
                    engine.get(k.as_bytes()).unwrap(),
                    Some(value(i).into_bytes()),
                    "{shape} {ctx}: {k}"
                );
            }
        };
        for (kind, files) in [
            (FaultKind::List, "/db"),
            (FaultKind::Lock, "LOCK"),
            (FaultKind::Open, ".run"),
            (FaultKind::Open, ".wal"),
        ] {
            let options = Options {
                sync: SyncMode::Never,
                storage: Storage::new(Failing::from_nth(kind, 1).on_files(files)),
                ..Options::default()
            };
            assert!(
                Engine::open_with(&dir, &design, options).is_err(),
                "{shape}: an opening whose {kind:?} of {files} fails must say so"
            );
        }
        let engine = common::open_unsynced(&dir, &design).unwrap();
        check(&engine, "after failed removals and openings");
        engine.close().unwrap();
    }
}

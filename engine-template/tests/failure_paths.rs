//! The engine's last failure paths: a panic in a background thread poisons the engine (writers get the
//! error rather than waiting for a flush that never comes, `close` returns it, and what was acknowledged is
//! there after a reopen); a directory whose MANIFEST was lost is refused with every file left in place.

mod common;

use cosine_engine::storage::{Failing, FaultKind, Storage};
use cosine_engine::{Engine, Error, Options, SyncMode};
use std::sync::mpsc;
use std::time::Duration;

/// Writes into `engine` until a put fails, at most `n`, on a thread of its own: Some((acknowledged keys, the
/// error)) if it failed, or a panic of the test if the writer hung for a minute.
fn write_until_error(engine: std::sync::Arc<Engine>, n: u32) -> (Vec<u32>, Option<Error>) {
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let mut acked = Vec::new();
        let mut error = None;
        for i in 0..n {
            match engine.put(format!("key{i:06}").as_bytes(), &[b'v'; 64]) {
                Ok(()) => acked.push(i),
                Err(e) => {
                    error = Some(e);
                    break;
                }
            }
        }
        // (the engine let go before the answer, so the caller may take it back)
        drop(engine);
        let _ = tx.send((acked, error));
    });
    rx.recv_timeout(Duration::from_secs(60))
        .expect("the writer hung: a panicked flush left it waiting")
}

#[test]
fn a_panic_in_a_flush_poisons_the_engine_and_close_returns_it() {
    for (shape, design) in common::shapes() {
        let dir = tempfile::tempdir().unwrap();
        // the first append to a run file (the first flush's) panics in the flush thread
        let options = Options {
            sync: SyncMode::Never,
            storage: Storage::new(
                Failing::from_nth(FaultKind::Append, 1)
                    .on_files(".run")
                    .panicking(),
            ),
            ..Options::default()
        };
        let engine = std::sync::Arc::new(Engine::open_with(dir.path(), &design, options).unwrap());
        let (acked, error) = write_until_error(engine.clone(), 50_000);
        let error = error.unwrap_or_else(|| panic!("{shape}: 50,000 writes and no flush failed"));
        assert!(
            error.to_string().contains("flush thread panicked"),
            "{shape}: {error}"
        );
        assert!(
            !acked.is_empty(),
            "{shape}: the panic came before any write"
        );
        // every later write gets it, and close returns it
        assert!(engine.put(b"after", b"x").is_err(), "{shape}");
        let engine = std::sync::Arc::try_unwrap(engine)
            .unwrap_or_else(|_| panic!("{shape}: the writer still holds the engine"));
        let closed = engine.close();
        assert!(
            matches!(&closed, Err(Error::Poisoned(m)) if m.contains("panicked")),
            "{shape}: close returned {closed:?}"
        );
        // reopened on a sound file system, every acknowledged write is there (the log holds them)
        let engine = common::open_unsynced(dir.path(), &design).unwrap();
        for i in &acked {
            assert!(
                engine
                    .get(format!("key{i:06}").as_bytes())
                    .unwrap()
                    .is_some(),
                "{shape}: acknowledged key {i} lost"
            );
        }
        engine.close().unwrap();
    }
}

#[test]
fn a_directory_that_lost_its_manifest_is_refused_and_left_whole() {
    for (shape, design) in common::shapes() {
        let dir = tempfile::tempdir().unwrap();
        let engine = common::open_unsynced(dir.path(), &design).unwrap();
        for i in 0..3000u32 {
            engine
                .put(format!("key{i:06}").as_bytes(), &[b'v'; 64])
                .unwrap();
        }
        engine.flush().unwrap();
        engine.close().unwrap();
        let files = |suffix: &str| {
            std::fs::read_dir(dir.path())
                .unwrap()
                .filter(|e| {
                    e.as_ref()
                        .unwrap()
                        .file_name()
                        .to_string_lossy()
                        .ends_with(suffix)
                })
                .count()
        };
        let runs = files(".run");
        assert!(runs > 0, "{shape}: no run file to protect");
        std::fs::remove_file(dir.path().join("MANIFEST")).unwrap();
        let refused = common::open_unsynced(dir.path(), &design);
        assert!(
            matches!(&refused, Err(Error::MissingManifest { runs: r, .. }) if *r == runs),
            "{shape}: {:?}",
            refused.as_ref().err()
        );
        assert!(
            refused
                .err()
                .unwrap()
                .to_string()
                .contains("nothing was deleted"),
            "{shape}"
        );
        assert_eq!(files(".run"), runs, "{shape}: run files deleted");
        // an empty directory still opens as a new database
        let fresh = tempfile::tempdir().unwrap();
        common::open_unsynced(fresh.path(), &design)
            .unwrap()
            .close()
            .unwrap();
    }
}

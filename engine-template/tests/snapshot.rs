//! Snapshots and streaming ranges under concurrent writers: a snapshot holds every batch whole or not at all,
//! keeps its view across flushes and compactions, and a range streams a store many times its buffer.

mod common;

use cosine_engine::{Engine, Options, SyncMode};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

#[test]
fn snapshots_hold_whole_batches_while_writers_run() {
    for (shape, design) in common::shapes() {
        let dir = tempfile::tempdir().unwrap();
        let engine = Arc::new(
            Engine::open_with(dir.path(), &design, Options::with_sync(SyncMode::Never)).unwrap(),
        );
        let stop = Arc::new(AtomicBool::new(false));
        let writers: Vec<_> = (0..2u32)
            .map(|w| {
                let (engine, stop) = (engine.clone(), stop.clone());
                std::thread::spawn(move || {
                    let mut round = 0u32;
                    while !stop.load(Ordering::SeqCst) {
                        // the pair (a, b) of a slot always changes together
                        let slot = (round * 7 + w) % 50;
                        let v = format!("w{w}-r{round}");
                        let (a, b) = (format!("a{slot:03}"), format!("b{slot:03}"));
                        engine
                            .write_batch(&[
                                (a.as_bytes(), Some(v.as_bytes())),
                                (b.as_bytes(), Some(v.as_bytes())),
                            ])
                            .unwrap();
                        round += 1;
                    }
                })
            })
            .collect();
        for _ in 0..30 {
            let snap = engine.snapshot().unwrap();
            let all: Vec<(Vec<u8>, Vec<u8>)> =
                snap.range(..).unwrap().collect::<Result<_, _>>().unwrap();
            let (a, b): (Vec<_>, Vec<_>) = all.iter().partition(|(k, _)| k[0] == b'a');
            assert_eq!(a.len(), b.len(), "{shape}: a snapshot holds half a batch");
            for ((ka, va), (kb, vb)) in a.iter().zip(&b) {
                assert_eq!(&ka[1..], &kb[1..]);
                assert_eq!(va, vb, "{shape}: a snapshot holds half a batch");
                assert_eq!(snap.get(ka).unwrap().as_ref(), Some(va));
            }
        }
        stop.store(true, Ordering::SeqCst);
        for w in writers {
            w.join().unwrap();
        }
    }
}

#[test]
fn a_snapshot_keeps_its_view_and_a_range_streams_past_the_buffers() {
    for (shape, design) in common::shapes() {
        let dir = tempfile::tempdir().unwrap();
        let engine =
            Engine::open_with(dir.path(), &design, Options::with_sync(SyncMode::Never)).unwrap();
        let n = 3000u32;
        for i in 0..n {
            engine.put(format!("k{i:05}").as_bytes(), b"old").unwrap();
        }
        let snap = engine.snapshot().unwrap();
        for i in (0..n).step_by(2) {
            engine.put(format!("k{i:05}").as_bytes(), b"new").unwrap();
        }
        for i in (1..n).step_by(4) {
            engine.delete(format!("k{i:05}").as_bytes()).unwrap();
        }
        engine.flush().unwrap();
        engine.wait_for_compactions().unwrap();
        let then: Vec<(Vec<u8>, Vec<u8>)> =
            snap.range(..).unwrap().collect::<Result<_, _>>().unwrap();
        assert_eq!(then.len(), n as usize, "{shape}");
        assert!(then.iter().all(|(_, v)| v == b"old"), "{shape}");
        drop(snap);
        // the live store, streamed from a bound: every even key new, odd keys 1 mod 4 gone
        let now: Vec<(Vec<u8>, Vec<u8>)> = engine
            .range(b"k00100".to_vec()..)
            .unwrap()
            .collect::<Result<_, _>>()
            .unwrap();
        let want: Vec<(Vec<u8>, Vec<u8>)> = (100..n)
            .filter(|i| i % 4 != 1)
            .map(|i| {
                let v: &[u8] = if i % 2 == 0 { b"new" } else { b"old" };
                (format!("k{i:05}").into_bytes(), v.to_vec())
            })
            .collect();
        assert_eq!(now, want, "{shape}");
    }
}

#[test]
fn a_snapshot_holds_every_write_acknowledged_before_it() {
    use std::sync::atomic::AtomicU64;
    for (shape, design) in common::shapes() {
        let dir = tempfile::tempdir().unwrap();
        let engine = Arc::new(
            Engine::open_with(dir.path(), &design, Options::with_sync(SyncMode::Batch)).unwrap(),
        );
        // the writer publishes each write once it is acknowledged
        let acked = Arc::new(AtomicU64::new(0));
        let stop = Arc::new(AtomicBool::new(false));
        let writer = {
            let (engine, acked, stop) = (engine.clone(), acked.clone(), stop.clone());
            std::thread::spawn(move || {
                let mut i = 0u64;
                while !stop.load(Ordering::SeqCst) {
                    i += 1;
                    engine
                        .put(format!("k{i:08}").as_bytes(), &i.to_le_bytes())
                        .unwrap();
                    acked.store(i, Ordering::SeqCst);
                }
            })
        };
        for _ in 0..20 {
            let before = acked.load(Ordering::SeqCst);
            let snap = engine.snapshot().unwrap();
            if before > 0 {
                assert_eq!(
                    snap.get(format!("k{before:08}").as_bytes()).unwrap(),
                    Some(before.to_le_bytes().to_vec()),
                    "{shape}: write {before}, acknowledged before the snapshot, is not in it"
                );
            }
            std::thread::sleep(std::time::Duration::from_millis(5));
        }
        stop.store(true, Ordering::SeqCst);
        writer.join().unwrap();
    }
}

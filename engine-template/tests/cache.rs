//! The entry cache (M_BC): lookups that read from the runs fill it, writes drop from it, and its memory stays
//! within the design's budget.

use cosine_engine::{Design, Engine, Options, SyncMode};
use std::sync::Arc;

fn cached_design(cache_bytes: u64) -> Design {
    let mut d = Design::rocksdb_like(16 << 10, 4 << 10, 1 << 20);
    d.block_bytes = 512;
    d.file_bytes = 8 << 10;
    d.cache_bytes = cache_bytes;
    d
}

#[test]
fn a_write_after_a_cached_read_is_what_the_next_read_returns() {
    let dir = tempfile::tempdir().unwrap();
    let e = Engine::open_with(
        dir.path(),
        &cached_design(64 << 10),
        Options::with_sync(SyncMode::Never),
    )
    .unwrap();
    e.put(b"k", b"v1").unwrap();
    e.flush().unwrap();
    assert_eq!(e.get(b"k").unwrap().as_deref(), Some(&b"v1"[..]));
    assert_eq!(
        e.stats().cache.fills,
        1,
        "a value read from the runs is cached"
    );
    let reads = e.stats().block_reads();
    assert_eq!(e.get(b"k").unwrap().as_deref(), Some(&b"v1"[..]));
    assert_eq!(e.stats().cache.hits, 1);
    assert_eq!(e.stats().block_reads(), reads, "a hit reads no block");
    e.put(b"k", b"v2").unwrap();
    assert_eq!(e.get(b"k").unwrap().as_deref(), Some(&b"v2"[..]));
    e.flush().unwrap();
    assert_eq!(e.get(b"k").unwrap().as_deref(), Some(&b"v2"[..]));
    e.delete(b"k").unwrap();
    assert_eq!(e.get(b"k").unwrap(), None);
    e.flush().unwrap();
    assert_eq!(e.get(b"k").unwrap(), None);
    // read-modify-write reads through the cache and drops what it replaces
    e.put(b"n", b"1").unwrap();
    e.flush().unwrap();
    assert_eq!(e.get(b"n").unwrap().as_deref(), Some(&b"1"[..]));
    e.read_modify_write(b"n", |v| v.map(|v| [v, b"+"].concat()))
        .unwrap();
    assert_eq!(e.get(b"n").unwrap().as_deref(), Some(&b"1+"[..]));
}

#[test]
fn the_cache_stays_within_m_bc_and_a_design_without_one_has_none() {
    let dir = tempfile::tempdir().unwrap();
    let budget = 32 << 10;
    let e = Engine::open_with(
        dir.path(),
        &cached_design(budget),
        Options::with_sync(SyncMode::Never),
    )
    .unwrap();
    for i in 0..2000u32 {
        e.put(format!("key{i:06}").as_bytes(), &[1u8; 100]).unwrap();
    }
    e.flush().unwrap();
    for i in 0..2000u32 {
        assert!(e.get(format!("key{i:06}").as_bytes()).unwrap().is_some());
    }
    let s = e.stats();
    assert!(
        s.memory.cache_bytes as u64 <= budget,
        "{} > {budget}",
        s.memory.cache_bytes
    );
    assert!(
        s.memory.cache_bytes as u64 > budget / 2,
        "{}",
        s.memory.cache_bytes
    );
    assert_eq!(s.memory.cache_budget_bytes, budget);
    drop(e);
    let dir = tempfile::tempdir().unwrap();
    let e = Engine::open_with(
        dir.path(),
        &cached_design(0),
        Options::with_sync(SyncMode::Never),
    )
    .unwrap();
    e.put(b"k", b"v").unwrap();
    e.flush().unwrap();
    e.get(b"k").unwrap();
    assert_eq!(e.stats().cache, Default::default());
}

/// Two threads write and read a few hot keys at once; a key's values only grow, so every read must return a
/// value no older than the last one the reader saw for that key (a lookup that filled the cache with an old
/// value while the write was already visible breaks this), and once the writer stops, every key reads as its
/// last write (no stale value stays cached).
#[test]
fn concurrent_writes_leave_no_stale_value_cached() {
    let dir = tempfile::tempdir().unwrap();
    let e = Arc::new(
        Engine::open_with(
            dir.path(),
            &cached_design(64 << 10),
            Options::with_sync(SyncMode::Never),
        )
        .unwrap(),
    );
    let keys = 8u32;
    let handles: Vec<_> = (0..2u32)
        .map(|t| {
            let e = e.clone();
            std::thread::spawn(move || {
                // the writer's values for one key only grow, so a reader that ever sees a value smaller than
                // one it saw before for the same key was answered by a stale cached entry
                let mut seen = vec![0u32; keys as usize];
                for i in 0..3000u32 {
                    let slot = ((i * 7 + t) % keys) as usize;
                    let k = format!("hot{slot}");
                    if t == 0 {
                        e.put(k.as_bytes(), format!("{}", i + 1).as_bytes())
                            .unwrap();
                    } else if let Some(v) = e.get(k.as_bytes()).unwrap() {
                        let n: u32 = String::from_utf8(v).unwrap().parse().unwrap();
                        assert!(n <= 3000);
                        assert!(n >= seen[slot], "{k}: read {n} after {}", seen[slot]);
                        seen[slot] = n;
                    }
                    if i % 500 == 0 {
                        e.flush().unwrap();
                    }
                }
            })
        })
        .collect();
    for h in handles {
        h.join().unwrap();
    }
    for k in 0..keys {
        let last = (0..3000u32).rev().find(|i| (i * 7) % keys == k).unwrap() + 1;
        let key = format!("hot{k}");
        for _ in 0..2 {
            assert_eq!(
                e.get(key.as_bytes()).unwrap(),
                Some(last.to_string().into_bytes()),
                "{key}"
            );
        }
        e.flush().unwrap();
    }
}

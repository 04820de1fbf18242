//! The engine against a `BTreeMap` model: random sequences of put, delete, get, scan, read-modify-write, flush
//! and reopen, on every shape, must agree.

mod common;

use cosine_engine::{Engine, Options, SyncMode};
use proptest::prelude::*;
use std::collections::BTreeMap;
use std::ops::Bound;

#[derive(Clone, Debug)]
enum Op {
    Put(u16, Vec<u8>),
    Delete(u16),
    Get(u16),
    Scan(u16, u16, usize),
    Rmw(u16),
    Flush,
    Reopen,
    /// Streams a range to its end.
    Range(u16, u16),
    /// Takes a snapshot (replacing the one held).
    Snapshot,
    /// Reads the held snapshot whole and one key of it.
    ReadSnapshot(u16),
}

/// What the store should hold.
type Model = BTreeMap<Vec<u8>, Vec<u8>>;

fn key(k: u16) -> Vec<u8> {
    format!("key-{k:05}").into_bytes()
}

fn op() -> impl Strategy<Value = Op> {
    op_over(400)
}

/// Operations on keys `0..n`.
fn op_over(n: u16) -> impl Strategy<Value = Op> {
    prop_oneof![
        8 => (0u16..n, proptest::collection::vec(any::<u8>(), 0..64)).prop_map(|(k, v)| Op::Put(k, v)),
        2 => (0u16..n).prop_map(Op::Delete),
        4 => (0u16..n).prop_map(Op::Get),
        1 => (0u16..n, 0u16..n, 1usize..50).prop_map(|(a, b, l)| Op::Scan(a.min(b), a.max(b), l)),
        1 => (0u16..n).prop_map(Op::Rmw),
        1 => Just(Op::Flush),
        1 => Just(Op::Reopen),
        1 => (0u16..n, 0u16..n).prop_map(|(a, b)| Op::Range(a.min(b), a.max(b))),
        1 => Just(Op::Snapshot),
        2 => (0u16..n).prop_map(Op::ReadSnapshot),
    ]
}

fn run(design: &cosine_design::Design, ops: &[Op]) -> Result<(), TestCaseError> {
    run_with(design, None, ops)
}

/// Runs `ops` against an engine of `design` built from `parts` (`None`: the design's own) and a `BTreeMap`.
fn run_with(
    design: &cosine_design::Design,
    parts: Option<cosine_engine::Parts>,
    ops: &[Op],
) -> Result<(), TestCaseError> {
    let dir = tempfile::tempdir().unwrap();
    let opts = Options {
        parts,
        ..Options::with_sync(SyncMode::Never)
    };
    let mut engine = Some(Engine::open_with(dir.path(), design, opts.clone()).unwrap());
    let mut model: BTreeMap<Vec<u8>, Vec<u8>> = BTreeMap::new();
    // a snapshot and the model as it was when the snapshot was taken
    let mut snap: Option<(cosine_engine::Snapshot, Model)> = None;
    for op in ops {
        let e = engine.as_ref().unwrap();
        match op {
            Op::Put(k, v) => {
                e.put(&key(*k), v).unwrap();
                model.insert(key(*k), v.clone());
            }
            Op::Delete(k) => {
                e.delete(&key(*k)).unwrap();
                model.remove(&key(*k));
            }
            Op::Get(k) => prop_assert_eq!(
                e.get(&key(*k)).unwrap(),
                model.get(&key(*k)).cloned(),
                "get {}",
                k
            ),
            Op::Scan(a, b, n) => {
                let got = e.scan(key(*a)..=key(*b), *n).unwrap();
                let want: Vec<(Vec<u8>, Vec<u8>)> = model
                    .range::<Vec<u8>, _>((Bound::Included(key(*a)), Bound::Included(key(*b))))
                    .take(*n)
                    .map(|(k, v)| (k.clone(), v.clone()))
                    .collect();
                prop_assert_eq!(got, want, "scan {}..={} limit {}", a, b, n);
            }
            Op::Rmw(k) => {
                let got = e
                    .read_modify_write(&key(*k), |old| {
                        let mut v = old.map(|o| o.to_vec()).unwrap_or_default();
                        v.push(b'+');
                        Some(v)
                    })
                    .unwrap();
                let m = model.entry(key(*k)).or_default();
                m.push(b'+');
                prop_assert_eq!(got.as_ref(), Some(&*m));
            }
            Op::Flush => e.flush().unwrap(),
            Op::Range(a, b) => {
                let got: Vec<(Vec<u8>, Vec<u8>)> = e
                    .range(key(*a)..key(*b))
                    .unwrap()
                    .collect::<Result<_, _>>()
                    .unwrap();
                let want: Vec<(Vec<u8>, Vec<u8>)> = model
                    .range(key(*a)..key(*b))
                    .map(|(k, v)| (k.clone(), v.clone()))
                    .collect();
                prop_assert_eq!(got, want, "range {}..{}", a, b);
            }
            Op::Snapshot => snap = Some((e.snapshot().unwrap(), model.clone())),
            Op::ReadSnapshot(k) => {
                if let Some((s, then)) = &snap {
                    let got = s.get(&key(*k)).unwrap();
                    prop_assert_eq!(got.as_ref(), then.get(&key(*k)), "snapshot get {}", k);
                    let got: Vec<(Vec<u8>, Vec<u8>)> =
                        s.range(..).unwrap().collect::<Result<_, _>>().unwrap();
                    let want: Vec<(Vec<u8>, Vec<u8>)> =
                        then.iter().map(|(k, v)| (k.clone(), v.clone())).collect();
                    prop_assert_eq!(got, want, "snapshot range");
                }
            }
            Op::Reopen => {
                // a snapshot holds the store open: it goes before the engine closes
                snap = None;
                engine.take().unwrap().close().unwrap();
                engine = Some(Engine::open_with(dir.path(), design, opts.clone()).unwrap());
            }
        }
    }
    let e = engine.take().unwrap();
    e.wait_for_compactions().unwrap();
    // a snapshot survives every flush and compaction since it was taken
    if let Some((s, then)) = snap.take() {
        let got: Vec<(Vec<u8>, Vec<u8>)> = s.range(..).unwrap().collect::<Result<_, _>>().unwrap();
        prop_assert_eq!(
            got,
            then.into_iter().collect::<Vec<_>>(),
            "snapshot after compactions"
        );
    }
    let all = e.scan(.., usize::MAX).unwrap();
    let want: Vec<(Vec<u8>, Vec<u8>)> = model.into_iter().collect();
    prop_assert_eq!(all, want);
    e.close().unwrap();
    Ok(())
}

/// Parses one line of `tests/regressions/model.txt`: the operations as proptest's `Debug` printed them.
fn parse_ops(text: &str) -> Vec<Op> {
    let body = text.trim().trim_start_matches('[').trim_end_matches(']');
    let mut ops = Vec::new();
    let mut rest = body.trim();
    while !rest.is_empty() {
        let name_end = rest
            .find(|c: char| !c.is_ascii_alphanumeric())
            .unwrap_or(rest.len());
        let name = &rest[..name_end];
        rest = &rest[name_end..];
        let mut args = "";
        if rest.starts_with('(') {
            // arguments up to the matching parenthesis (a value's bytes are one bracketed list)
            let close = rest.find(')').expect("an argument list is closed");
            args = &rest[1..close];
            rest = &rest[close + 1..];
        }
        rest = rest.trim_start().trim_start_matches(',').trim_start();
        let (nums, bytes) = match args.split_once('[') {
            Some((n, b)) => (n, Some(b.trim_end_matches(']'))),
            None => (args, None),
        };
        let n: Vec<u64> = nums
            .split(',')
            .map(str::trim)
            .filter(|x| !x.is_empty())
            .map(|x| x.parse().expect("a number"))
            .collect();
        let value = || -> Vec<u8> {
            bytes
                .unwrap_or("")
                .split(',')
                .map(str::trim)
                .filter(|x| !x.is_empty())
                .map(|x| x.parse().expect("a byte"))
                .collect()
        };
        ops.push(match name {
            "Put" => Op::Put(n[0] as u16, value()),
            "Delete" => Op::Delete(n[0] as u16),
            "Get" => Op::Get(n[0] as u16),
            "Scan" => Op::Scan(n[0] as u16, n[1] as u16, n[2] as usize),
            "Rmw" => Op::Rmw(n[0] as u16),
            "Flush" => Op::Flush,
            "Reopen" => Op::Reopen,
            "Range" => Op::Range(n[0] as u16, n[1] as u16),
            "Snapshot" => Op::Snapshot,
            "ReadSnapshot" => Op::ReadSnapshot(n[0] as u16),
            other => panic!("unknown operation {other}"),
        });
    }
    ops
}

/// Every shrunk failure proptest ever found, replayed by name on every shape (proptest's own seed file replays
/// a failure only while the strategies that drew it stay unchanged).
#[test]
fn shrunk_failures_stay_fixed() {
    let text = include_str!("regressions/model.txt");
    let mut replayed = 0;
    for line in text
        .lines()
        .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
    {
        let (head, ops_text) = line.split_once(": [").expect("name: [ops]");
        let ops = parse_ops(&format!("[{ops_text}"));
        let names = [
            "Put(", "Delete(", "Get(", "Scan(", "Rmw(", "Flush", "Reopen", "Range(", "Snapshot",
        ];
        let written: usize = names.iter().map(|n| ops_text.matches(n).count()).sum();
        assert_eq!(ops.len(), written, "{head}: every operation parsed");
        // a failure of the random-design or random-parts tests names its design (JSON) and parts
        let (name, design) = match head.split_once(" design=") {
            Some((name, rest)) => (name, Some(rest)),
            None => (head, None),
        };
        match design.map(|d| d.split_once(" parts=").unwrap_or((d, ""))) {
            Some((json, parts)) => {
                let design: cosine_design::Design =
                    serde_json::from_str(json).expect("a design's JSON");
                let parts = (!parts.is_empty()).then(|| parse_parts(parts));
                run_with(&design, parts, &ops).unwrap_or_else(|e| panic!("{name}: {e}"));
            }
            None => {
                for (shape, design) in common::shapes() {
                    run(&design, &ops).unwrap_or_else(|e| panic!("{name} on {shape}: {e}"));
                }
            }
        }
        replayed += 1;
    }
    assert!(
        replayed >= 3,
        "the regression file holds the shrunk failures"
    );
}

/// Parts written as `buffer,index,filter,wait[,read_only]` (e.g. `HashLog,Fences,Block,true`; filter `None`
/// for none; the read-only region off when not given, as in the regression files written before it).
fn parse_parts(text: &str) -> cosine_engine::Parts {
    use cosine_design::FilterGranularity;
    use cosine_engine::parts::{BufferKind, IndexKind, Parts};
    let f: Vec<&str> = text.trim().split(',').map(str::trim).collect();
    let kind = |i: usize, a: &str, b: &str| match f.get(i) {
        Some(x) if *x == a || *x == b => *x == a,
        other => panic!("part {i} must be {a} or {b}, not {other:?}"),
    };
    Parts {
        buffer: if kind(0, "HashLog", "Sorted") {
            BufferKind::HashLog
        } else {
            BufferKind::Sorted
        },
        index: if kind(1, "Hash", "Fences") {
            IndexKind::Hash
        } else {
            IndexKind::Fences
        },
        filter: match f.get(2).copied() {
            Some("File") => Some(FilterGranularity::File),
            Some("Block") => Some(FilterGranularity::Block),
            Some("Run") => Some(FilterGranularity::Run),
            Some("None") => None,
            other => panic!("filter must be File, Block, Run or None, not {other:?}"),
        },
        wait_for_level1: kind(3, "true", "false"),
        read_only_region: f.len() > 4 && kind(4, "true", "false"),
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, max_shrink_iters: 200, ..ProptestConfig::default() })]

    #[test]
    fn rocksdb_like_matches_btreemap(ops in proptest::collection::vec(op(), 1..600)) {
        run(&common::shapes()[0].1, &ops)?;
    }

    #[test]
    fn tiered_matches_btreemap(ops in proptest::collection::vec(op(), 1..600)) {
        run(&common::shapes()[1].1, &ops)?;
    }

    #[test]
    fn btree_like_matches_btreemap(ops in proptest::collection::vec(op(), 1..600)) {
        run(&common::shapes()[2].1, &ops)?;
    }

    #[test]
    fn lsh_like_matches_btreemap(ops in proptest::collection::vec(op(), 1..600)) {
        run(&common::shapes()[3].1, &ops)?;
    }

    #[test]
    fn hybrid_matches_btreemap(ops in proptest::collection::vec(op(), 1..600)) {
        run(&common::shapes()[4].1, &ops)?;
    }

    #[test]
    fn lsh_append_only_matches_btreemap(ops in proptest::collection::vec(op(), 1..600)) {
        run(&common::shapes()[5].1, &ops)?;
    }

    /// Few keys, so that lookups, writes and the entry cache's fills and evictions meet on the same keys.
    #[test]
    fn an_entry_cache_over_hot_keys_matches_btreemap(
        cache in 1u64..6,
        ops in proptest::collection::vec(op_over(24), 1..600),
    ) {
        let mut design = common::shapes()[0].1.clone();
        design.cache_bytes = cache * 512;
        run(&design, &ops)?;
    }

    #[test]
    fn random_designs_match_btreemap(
        design in common::design_strategy(),
        ops in proptest::collection::vec(op(), 1..400),
    ) {
        run(&design, &ops)?;
    }

    #[test]
    fn any_parts_match_btreemap(
        design in common::design_strategy(),
        parts in common::parts_strategy(),
        ops in proptest::collection::vec(op(), 1..400),
    ) {
        run_with(&design, Some(parts), &ops)?;
    }
}

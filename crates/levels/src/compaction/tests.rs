use super::subcompaction::split_ranges;
use super::*;
use crate::merge::{EntryIter, RunIter};
use crate::runfile::{Entry, WriterOptions};
use crate::stats::IoStats;
use cosine_design::FilterGranularity;
use cosine_storage::Storage;
use std::path::Path;
use std::sync::atomic::AtomicU64;

static STORAGE: std::sync::LazyLock<Storage> = std::sync::LazyLock::new(Storage::default);

fn output<'a>(
    dir: &'a Path,
    next_id: &'a AtomicU64,
    stats: &'a Arc<IoStats>,
    threads: usize,
) -> Output<'a> {
    Output {
        dir,
        storage: &STORAGE,
        next_id,
        writer: WriterOptions {
            block_bytes: 512,
            bits_per_key: 8.0,
            granularity: FilterGranularity::File,
            index: cosine_fence_pointers::IndexKind::Fences,
        },
        file_bytes: 16 << 10,
        stats,
        level: 2,
        threads,
    }
}

/// One run (several files) holding keys `step·i` for i < n, with values tagged `tag`, every 5th a
/// tombstone.
fn run(out: &Output<'_>, n: u64, step: u64, seq0: u64, tag: &str) -> Vec<Arc<RunFile>> {
    let mut i = 0;
    write_entries(
        || {
            if i == n {
                return Ok(None);
            }
            let k = format!("key{:08}", i * step).into_bytes();
            let v = (i % 5 != 0).then(|| format!("{tag}-{i}").into_bytes());
            i += 1;
            Ok(Some((k, seq0 + i, v)))
        },
        false,
        out,
    )
    .unwrap()
    .0
}

fn entries(files: &[Arc<RunFile>]) -> Vec<Entry> {
    let mut it = RunIter::new(files.to_vec(), None, None);
    let mut all = Vec::new();
    while let Some(e) = it.next_entry().unwrap() {
        all.push(e);
    }
    all
}

#[test]
fn subcompactions_write_what_one_merge_writes() {
    let dir = tempfile::tempdir().unwrap();
    let next_id = AtomicU64::new(1);
    let stats = Arc::new(IoStats::default());
    let one = output(dir.path(), &next_id, &stats, 1);
    // newest first: overlapping keys, different densities, so the cuts fall unevenly
    let inputs: Inputs = vec![
        (run(&one, 3_000, 3, 100_000, "new"), 1),
        (run(&one, 4_000, 2, 50_000, "mid"), 1),
        (run(&one, 9_000, 1, 0, "old"), 2),
    ];
    assert!(inputs.iter().all(|(f, _)| f.len() > 3));
    for drop_tombstones in [false, true] {
        let (serial, _) = merge_inputs(&inputs, drop_tombstones, &one).unwrap();
        for threads in [2, 3, 8] {
            let out = output(dir.path(), &next_id, &stats, threads);
            assert!(split_ranges(&inputs, threads, out.file_bytes).len() > 1);
            let (parallel, bytes) = merge_inputs(&inputs, drop_tombstones, &out).unwrap();
            assert_eq!(bytes, parallel.iter().map(|f| f.meta.size).sum::<u64>());
            // files concatenate in key order
            for w in parallel.windows(2) {
                assert!(w[0].meta.max_key < w[1].meta.min_key);
            }
            assert_eq!(entries(&parallel), entries(&serial), "threads {threads}");
        }
        // the serial merge against a model: each key's newest version
        let mut model = std::collections::BTreeMap::new();
        for (n, step, tag) in [
            (9_000u64, 1u64, "old"),
            (4_000, 2, "mid"),
            (3_000, 3, "new"),
        ] {
            for i in 0..n {
                let v = (i % 5 != 0).then(|| format!("{tag}-{i}").into_bytes());
                model.insert(format!("key{:08}", i * step).into_bytes(), v);
            }
        }
        let want: Vec<(Vec<u8>, Option<Vec<u8>>)> = model
            .into_iter()
            .filter(|(_, v)| !drop_tombstones || v.is_some())
            .collect();
        let got: Vec<(Vec<u8>, Option<Vec<u8>>)> = entries(&serial)
            .into_iter()
            .map(|(k, _, v)| (k, v))
            .collect();
        assert_eq!(got, want);
    }
}

#[test]
fn the_planner_reads_a_live_version_as_it_reads_its_views() {
    use crate::planner::{plan, Policy};
    use cosine_design::{Compaction, Design, FilePicking, RunStrategy};
    let dir = tempfile::tempdir().unwrap();
    let next_id = AtomicU64::new(1);
    let stats = Arc::new(IoStats::default());
    let out = output(dir.path(), &next_id, &stats, 1);
    // level 1: three small runs, or one run of several files; level 2: one run of several files
    let bottom = Arc::new(Run {
        id: 1,
        files: run(&out, 3_000, 1, 0, "l2"),
    });
    let three = (0..3u64)
        .map(|r| {
            let files = run(&out, 300, 7 + r, 10_000 * (r + 1), "l1");
            Arc::new(Run { id: 100 + r, files })
        })
        .collect();
    let one = vec![Arc::new(Run {
        id: 200,
        files: run(&out, 1_500, 2, 50_000, "l1"),
    })];
    let (mut planned, mut by_file) = (0, 0);
    for level1 in [three, one] {
        let version = Version {
            levels: vec![
                Level { runs: level1 },
                Level {
                    runs: vec![bottom.clone()],
                },
            ],
        };
        let views = view(&version);
        for (k, compaction, strategy, picking, threshold) in [
            (
                1,
                Compaction::Full,
                RunStrategy::First,
                FilePicking::Oldest,
                1.0,
            ),
            (
                2,
                Compaction::Hybrid,
                RunStrategy::Fullest,
                FilePicking::DenseFp,
                0.5,
            ),
            (
                3,
                Compaction::Partial,
                RunStrategy::LastFull,
                FilePicking::SparseFp,
                1e-6,
            ),
            (
                4,
                Compaction::Partial,
                RunStrategy::First,
                FilePicking::ChooseFirst,
                1e-6,
            ),
            (
                1,
                Compaction::Partial,
                RunStrategy::First,
                FilePicking::Oldest,
                1e-6,
            ),
            (
                1,
                Compaction::Partial,
                RunStrategy::First,
                FilePicking::DenseFp,
                1e-6,
            ),
        ] {
            let mut d = Design::rocksdb_like(4 << 10, 0, 1 << 20);
            (d.hot_runs, d.compaction, d.run_strategy) = (k, compaction, strategy);
            (d.file_picking, d.merge_threshold) = (picking, threshold);
            let p = Policy::of(&d, 1);
            let live = plan(&version.levels, &p);
            assert_eq!(live, plan(&views, &p), "{d:?}");
            planned += usize::from(live != crate::planner::Plan::Nothing);
            by_file += usize::from(matches!(live, crate::planner::Plan::MergeFile { .. }));
        }
    }
    assert!(
        planned >= 3 && by_file >= 1,
        "the cases exercise the planner"
    );
}

#[test]
fn runs_of_one_file_each_split_evenly() {
    // tiered runs smaller than a file: each input is one file spanning the whole key space
    let dir = tempfile::tempdir().unwrap();
    let next_id = AtomicU64::new(1);
    let stats = Arc::new(IoStats::default());
    let mut one = output(dir.path(), &next_id, &stats, 1);
    one.file_bytes = u64::MAX;
    let inputs: Inputs = (0..4)
        .map(|r| (run(&one, 2_000, 4, r * 10_000, &format!("r{r}")), 1))
        .collect();
    assert!(inputs.iter().all(|(f, _)| f.len() == 1));
    for parts in [2, 4] {
        let ranges = split_ranges(&inputs, parts, 16 << 10);
        assert_eq!(ranges.len(), parts);
        // every range holds about 1/parts of the keys
        let all = entries(&inputs[0].0);
        for (lo, hi) in &ranges {
            let n = all
                .iter()
                .filter(|(k, _, _)| {
                    lo.as_ref().is_none_or(|l| k >= l) && hi.as_ref().is_none_or(|h| k < h)
                })
                .count();
            let even = all.len() / parts;
            assert!(
                n > even / 2 && n < even * 3 / 2,
                "{parts} parts: {n} of {}",
                all.len()
            );
        }
    }
}

#[test]
fn small_merges_stay_on_one_thread() {
    let dir = tempfile::tempdir().unwrap();
    let next_id = AtomicU64::new(1);
    let stats = Arc::new(IoStats::default());
    let out = output(dir.path(), &next_id, &stats, 1);
    let inputs: Inputs = vec![
        (run(&out, 50, 1, 0, "a"), 1),
        (run(&out, 50, 2, 100, "b"), 2),
    ];
    assert_eq!(split_ranges(&inputs, 8, out.file_bytes), vec![(None, None)]);
}

//! The tree a load leaves. A workload that never writes meets the shape the load's flushes settled into, not
//! the steady state of a workload that writes: which levels hold data, how many runs each, how large, and (under
//! partial compaction) which key ranges. That shape is idiosyncratic (a tiered level pushed down whole leaves
//! the levels above it empty; a last level keeps up to Z runs of unequal sizes), so it is not estimated: the
//! engine's own planner ([`cosine_design::planner::plan`]) is run on a shape without data
//! ([`cosine_design::simulate::apply`]), flush by flush, with the hot levels (K runs) and the cold ones (Z runs)
//! decided as the engine decides them: its runs' fences resident newest first while M_FP lasts.
//!
//! Found by `cosine validate --held-out` on read-only (YCSB-C) cells: B-tree-like designs priced at 6.51 and
//! 3.75 blocks a lookup measured 1.80 and 9.96; the nominal tree (each level its capacity's share of the
//! keys, in K or Z runs) had the wrong runs in the wrong levels.

use cosine_design::planner::{plan, LevelView, Plan, Policy, RunShape};
use cosine_design::simulate::{apply, run_over, Ids};
use cosine_design::{Compaction, Design, FilePicking, RunStrategy};
use rustc_hash::FxHashMap;
use std::cell::RefCell;
use std::rc::Rc;

/// One run of the tree a load leaves.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct LoadedRun {
    /// Its level (1-based).
    pub level: usize,
    /// Entries it holds.
    pub entries: f64,
    /// The share of the key space its files cover: 1 for a whole flush or merge, less for the run of a level
    /// that partial compaction feeds file by file (a lookup whose key lies outside every file skips the run).
    pub coverage: f64,
}

/// Flushes beyond which a load is not simulated: the caller prices the nominal tree instead. A load of that
/// many buffers has levels whose contents average out over where the load stopped in their fill cycles, and
/// simulating it would cost a search milliseconds a design.
pub const MAX_FLUSHES: f64 = 2048.0;

/// Files a run of the whole data set is cut into at most in the simulation. The engine's files may be smaller;
/// the shape does not depend on the file size except through partial compaction's granularity (one file of a
/// level pushed at a time), which 1/256 of the data keeps fine.
const MAX_FILES: f64 = 256.0;

/// Plans carried out after one flush at most (a guard: the planner settles in a few).
const MAX_PLANS_PER_FLUSH: usize = 10_000;

/// The runs a load of `entries` distinct keys leaves once flushed and settled, top level first and each level's
/// runs newest first. An entry takes `disk_entry_bytes` in a run (its key, value and header) and
/// `buffer_entry_bytes` in the write buffer (what the buffer charges it: a flush of M_B/2 holds M_B/2 over
/// this many entries); `fence_per_entry` is the fence memory one entry's share of a run takes (a run's fences
/// are resident while M_FP lasts, which decides the hot levels). None when the load takes more than
/// [`MAX_FLUSHES`] flushes (or the arguments are not finite and positive).
pub fn loaded_runs(
    design: &Design,
    entries: f64,
    disk_entry_bytes: f64,
    buffer_entry_bytes: f64,
    fence_per_entry: f64,
) -> Option<Rc<Vec<LoadedRun>>> {
    let per_flush = (design.flush_bytes() as f64 / buffer_entry_bytes)
        .floor()
        .max(1.0);
    let ok = |x: f64| x > 0.0 && x.is_finite();
    if !ok(entries) || !ok(disk_entry_bytes) || !ok(per_flush) || entries / per_flush > MAX_FLUSHES
    {
        return None;
    }
    let flush_run = (per_flush * disk_entry_bytes).round().max(1.0) as u64;
    let total = (entries * disk_entry_bytes).round() as u64;
    let per_byte = fence_per_entry.max(0.0) / disk_entry_bytes;
    let key = MemoKey::of(design, total, flush_run, per_byte);
    if let Some(hit) = LOADED.with(|m| m.borrow().get(&key).cloned()) {
        return Some(hit);
    }
    let runs = Rc::new(simulate_load(
        design,
        total,
        flush_run,
        per_byte,
        disk_entry_bytes,
    ));
    LOADED.with(|m| {
        let mut m = m.borrow_mut();
        if m.len() >= MEMO_SIZE {
            m.clear();
        }
        m.insert(key, runs.clone());
    });
    Some(runs)
}

/// Flushes runs of `flush_run` bytes (the last one what is left of `total`) through the planner.
fn simulate_load(
    design: &Design,
    total: u64,
    flush_run: u64,
    per_byte: f64,
    entry_bytes: f64,
) -> Vec<LoadedRun> {
    let flush = flush_run;
    let file_bytes = design
        .file_bytes
        .max((total as f64 / MAX_FILES).ceil() as u64)
        .max(1);
    let mut levels: Vec<LevelView> = Vec::new();
    let mut ids = Ids::default();
    let mut left = total;
    while left > 0 {
        // the load's flushes: full buffers, then (the settle) what the last one held
        let bytes = left.min(flush);
        left -= bytes;
        if levels.is_empty() {
            levels.push(Vec::new());
        }
        levels[0].insert(0, run_over(&mut ids, bytes, 0, u64::MAX, file_bytes));
        for _ in 0..MAX_PLANS_PER_FLUSH {
            let hot = hot_levels(&levels, design.fence_bytes as f64, per_byte);
            let p = plan(&levels, &Policy::of(design, hot));
            if p == Plan::Nothing {
                break;
            }
            levels = apply(&p, &levels, file_bytes, &mut ids);
        }
    }
    let space = u64::MAX as f64 + 1.0;
    levels
        .iter()
        .enumerate()
        .flat_map(|(i, level)| {
            level.iter().map(move |run| LoadedRun {
                level: i + 1,
                entries: run.bytes() as f64 / entry_bytes,
                coverage: (run
                    .files
                    .iter()
                    .map(|f| {
                        let (lo, hi) = (key_num(&f.min_key), key_num(&f.max_key));
                        (hi.saturating_sub(lo) as f64 + 1.0) / space
                    })
                    .sum::<f64>())
                .min(1.0),
            })
        })
        .collect()
}

/// Levels that count as hot, as the engine counts them: walking the levels from the top and each level's runs
/// newest first while their fences fit M_FP; the level of the first run that does not fit is hot if it kept
/// one run resident. Every level is hot when all fit.
fn hot_levels(levels: &[LevelView], fence_bytes: f64, per_byte: f64) -> usize {
    let mut left = fence_bytes;
    for (i, level) in levels.iter().enumerate() {
        for (j, run) in level.iter().enumerate() {
            let need = run.bytes() as f64 * per_byte;
            if need > left {
                return i + usize::from(j > 0);
            }
            left -= need;
        }
    }
    levels.len().max(1) + 8
}

fn key_num(k: &[u8]) -> u64 {
    let mut b = [0u8; 8];
    for (i, x) in k.iter().take(8).enumerate() {
        b[i] = *x;
    }
    u64::from_be_bytes(b)
}

/// What a loaded tree depends on: the design's shape fields, the data's bytes and the fence bytes per byte.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
struct MemoKey {
    numbers: [u64; 11],
    kinds: (Compaction, RunStrategy, FilePicking),
}

impl MemoKey {
    fn of(d: &Design, total: u64, flush_run: u64, per_byte: f64) -> Self {
        MemoKey {
            numbers: [
                d.size_ratio,
                d.hot_runs,
                d.cold_runs,
                d.flush_bytes(),
                d.file_bytes,
                d.fence_bytes,
                d.merge_threshold.to_bits(),
                u64::from(d.full_compaction_levels),
                total,
                flush_run,
                per_byte.to_bits(),
            ],
            kinds: (d.compaction, d.run_strategy, d.file_picking),
        }
    }
}

/// Loaded trees a thread keeps (all are dropped when it fills up).
const MEMO_SIZE: usize = 1 << 12;

thread_local! {
    /// [`loaded_runs`]' results on this thread: a search prices many designs that share a shape and differ in
    /// the memory they give filters or an entry cache.
    static LOADED: RefCell<FxHashMap<MemoKey, Rc<Vec<LoadedRun>>>> = RefCell::new(FxHashMap::default());
}

#[cfg(test)]
mod tests {
    use super::*;

    fn btree(t: u64, k: u64, z: u64, compaction: Compaction) -> Design {
        let mut d = Design::wiredtiger_like(524_288, 524_288);
        d.class = None;
        d.size_ratio = t;
        d.hot_runs = k;
        d.cold_runs = z;
        d.compaction = compaction;
        d.file_bytes = 2 << 20;
        d.validate().unwrap();
        d
    }

    #[test]
    fn a_load_keeps_every_entry_once() {
        for (t, k, z, c) in [
            (5, 4, 3, Compaction::Partial),
            (11, 6, 9, Compaction::Partial),
            (10, 1, 5, Compaction::Hybrid),
            (2, 1, 1, Compaction::Full),
        ] {
            let d = btree(t, k, z, c);
            let runs = loaded_runs(&d, 30_000.0, 1_040.0, 1_136.0, 16.0).unwrap();
            let held: f64 = runs.iter().map(|r| r.entries).sum();
            assert!((held - 30_000.0).abs() < 1.0, "T={t} K={k} Z={z}: {held}");
            let policy = Policy::of(&d, usize::MAX);
            let depth = runs.iter().map(|r| r.level).max().unwrap();
            for level in 1..=depth {
                let n = runs.iter().filter(|r| r.level == level).count();
                assert!(
                    n <= policy.run_limit(level, depth).max(1),
                    "T={t}: level {level} holds {n}"
                );
            }
            assert!(runs.iter().all(|r| r.coverage > 0.0 && r.coverage <= 1.0));
        }
    }

    #[test]
    fn a_tiered_level_pushed_whole_leaves_the_levels_above_it_empty() {
        // T = 11, K = 6, Z = 9 over 30,000 1 KiB entries in 256 KiB flushes: level 1 pushes six flushes at a
        // time into level 2, the last level, which keeps up to nine such runs (the engine held 4 runs at level
        // 1 and 9 at level 2 after this load)
        let mut d = btree(11, 6, 9, Compaction::Partial);
        d.run_strategy = RunStrategy::First;
        d.file_picking = FilePicking::Oldest;
        d.merge_threshold = 1.0;
        d.block_bytes = 4096;
        let runs = loaded_runs(&d, 30_000.0, 1_040.0, 1_136.0, 16.0).unwrap();
        let per_level = |l: usize| runs.iter().filter(|r| r.level == l).count();
        assert_eq!(per_level(2), 9, "{runs:?}");
        assert!(per_level(1) >= 1 && per_level(1) <= 5, "{runs:?}");
    }

    #[test]
    fn too_many_flushes_are_not_simulated() {
        let d = btree(10, 1, 1, Compaction::Full);
        let flush = d.flush_bytes() as f64;
        assert!(loaded_runs(&d, (MAX_FLUSHES + 1.0) * flush / 100.0, 90.0, 100.0, 1.0).is_none());
        assert!(loaded_runs(&d, (MAX_FLUSHES - 1.0) * flush / 100.0, 90.0, 100.0, 1.0).is_some());
        assert!(loaded_runs(&d, 0.0, 90.0, 100.0, 1.0).is_none());
    }
}

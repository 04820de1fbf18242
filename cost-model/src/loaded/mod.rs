//! The tree a load leaves. A workload that never writes meets the shape the load's flushes settled into, not
//! the steady state of a workload that writes: which levels hold data, how many runs each, how large, and (under
//! partial compaction) which key ranges. That shape is idiosyncratic (a tiered level pushed down whole leaves
//! the levels above it empty; a last level keeps up to Z runs of unequal sizes), so it is not estimated: the
//! engine's own planner ([`cosine_design::planner::plan`]) is run on a shape without data
//! ([`cosine_design::simulate::apply`]), flush by flush, with the hot levels (K runs) and the cold ones (Z runs)
//! decided as the engine decides them: its runs' fences resident newest first while M_FP lasts. A flush holds
//! M_B/2 over what the write buffer charges an entry, and a run weighs what the engine's files weigh (entries
//! with their headers and block framing, fences, filters, each file's footer), because a level is pushed down
//! on its bytes. The engine's flushes and merges run beside the writer, so one load can leave different trees
//! from run to run: the cost model prices the average over loads ending within [`LOAD_SPREAD`] of the data's
//! size ([`loaded_trees`]).
//!
//! Found by `cosine validate --held-out` on read-only (YCSB-C) cells: B-tree-like designs priced at 6.51 and
//! 3.75 blocks a lookup measured 1.80 and 9.96; the nominal tree (each level its capacity's share of the
//! keys, in K or Z runs) had the wrong runs in the wrong levels.

use crate::keys::{distinct_after, writes_to_fill, AlphaForm, KeyPart};
use cosine_design::planner::{plan, residency, FileView, LevelView, Plan, Policy, RunView};
use cosine_design::shape::MAX_BITS_PER_KEY;
use cosine_design::simulate::{apply, apply_keeping_versions, run_over, Files, Ids, Mix, Versions};
use cosine_design::{Compaction, Design, FilePicking, RunStrategy};
use rustc_hash::FxHashMap;
use std::borrow::Cow;
use std::cell::RefCell;
use std::rc::Rc;

/// One run of the tree a load leaves.
#[derive(Clone, Debug, PartialEq)]
pub struct LoadedRun {
    /// Its level (1-based).
    pub level: usize,
    /// Entries it holds.
    pub entries: f64,
    /// The share of the key space its files cover: 1 for a whole flush or merge, less for the run of a level
    /// that partial compaction feeds file by file (a lookup whose key lies outside every file skips the run).
    pub coverage: f64,
    /// For each run above it (in the tree's order, newest first), the share of this run's entries whose keys
    /// lie in that run's files: what a lookup of a key this run holds meets on its way down. Not the runs'
    /// coverage: after a load, partial compaction leaves the levels under the whole ones holding mostly
    /// disjoint ranges (a file moves down where it overlaps nothing), so a stored key seldom lies in a file of
    /// a partial level above its own even where that level covers a fifth of the key line.
    pub within: Vec<f64>,
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

/// What an entry and a file take, as the engine lays them out and charges them.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Sizes {
    /// Bytes an entry takes in a run file: its key, value and header, and its share of its block's framing and
    /// on-disk fence ([`cosine_design::shape::run_entry_disk_bytes`]); filters left out.
    pub disk_entry: f64,
    /// Bytes an entry counts towards the file size at which the writer cuts a file: its data block's share
    /// ([`cosine_design::shape::run_entry_data_bytes`]).
    pub data_entry: f64,
    /// Bytes the write buffer charges an entry ([`cosine_design::shape::sorted_buffer_entry_bytes`]): a flush of
    /// M_B/2 holds M_B/2 over this many entries.
    pub buffer_entry: f64,
    /// Bytes every run file carries besides its entries ([`cosine_design::shape::run_file_overhead_bytes`]).
    pub file_overhead: u64,
    /// Fence memory of one entry's share of a run (a run's fences are resident while M_FP lasts, which decides
    /// the hot levels).
    pub fence_per_entry: f64,
}

impl Sizes {
    /// The sizes of `key`-byte keys and `value`-byte values in `block_bytes` blocks, as the engine's buffer
    /// and run-file writer give them.
    pub fn of(key: usize, value: usize, block_bytes: usize) -> Self {
        use cosine_design::shape::{
            run_entry_data_bytes, run_entry_disk_bytes, run_fence_memory_per_entry,
            run_file_overhead_bytes, sorted_buffer_entry_bytes,
        };
        Sizes {
            disk_entry: run_entry_disk_bytes(key, value, block_bytes),
            data_entry: run_entry_data_bytes(key, value, block_bytes),
            buffer_entry: sorted_buffer_entry_bytes(key, value) as f64,
            file_overhead: run_file_overhead_bytes(key),
            fence_per_entry: run_fence_memory_per_entry(key, value, block_bytes),
        }
    }
}

/// How far a load's end is taken to fall either side of its entries: the engine's flushes and merges run
/// beside the writer, so where a load stops in its levels' fill cycles varies from load to load (the same
/// YCSB-C load of one tiered design left 3 or 4 runs at level 2 and 26,048-26,928 entries at level 3 in three
/// runs here), and a percent's error in the entries a flush holds moves it as much.
pub const LOAD_SPREAD: f64 = 0.05;

/// The runs a load of `entries` distinct keys leaves once flushed and settled, top level first and each level's
/// runs newest first, with entries and files of `sizes`: the load's full buffers flushed one at a time, each
/// settled before the next, then what the last buffer held. None when the load takes more than
/// [`MAX_FLUSHES`] flushes (or the sizes are not finite and positive).
pub fn loaded_runs(design: &Design, entries: f64, sizes: Sizes) -> Option<Rc<Vec<LoadedRun>>> {
    let load = Load::of(design, entries, sizes)?;
    // full flushes and the rest, counted in entries (rounded bytes would leave a phantom run of a few bytes)
    let per_flush = entries_per_flush(design, sizes);
    let full = (entries.round() / per_flush).floor();
    let rest = entries.round() - full * per_flush;
    let tail = (rest >= 1.0).then(|| (rest * load.sizes.disk_entry).round().max(1.0) as u64);
    let trees = memoised(design, &load, 0, || {
        simulate_load(design, &load, full as usize, &[full as usize], |_| tail)
    });
    trees.first().cloned().map(Rc::new)
}

/// The trees of loads whose ends spread [`LOAD_SPREAD`] either side of `entries`: one for every count of full
/// flushes in that window, each followed by the settle's flush of what the last buffer held: a share of a
/// flush that differs from tree to tree, half on average. What a lookup meets on average after a load of
/// about `entries`. None as for
/// [`loaded_runs`].
pub fn loaded_trees(
    design: &Design,
    entries: f64,
    sizes: Sizes,
) -> Option<Rc<Vec<Vec<LoadedRun>>>> {
    let load = Load::of(design, entries * (1.0 + LOAD_SPREAD), sizes)?;
    let per_flush = entries_per_flush(design, sizes);
    let lo = ((entries * (1.0 - LOAD_SPREAD) / per_flush).floor() as usize).max(1);
    let hi = ((entries * (1.0 + LOAD_SPREAD) / per_flush).ceil() as usize).max(lo);
    let at: Vec<usize> = (lo..=hi).collect();
    // (the last buffer holds a share of a flush spread evenly over the loads' ends: each tree's a step of the
    // golden ratio's fraction further, about half on average. One half-full tail for every tree put a T = 2
    // design's level 1 at exactly its push threshold, 1.5 flushes of θ = 0.75 times 2, in every tree: the
    // planner kept it there where the engine's load ends pushed it down in 3 of 11)
    let tail = |k: usize| {
        let share = (0.5 + k as f64 * 0.618_033_988_749_895).fract();
        Some(((load.flush_run as f64 * share).round() as u64).max(1))
    };
    Some(memoised(design, &load, 1, || {
        simulate_load(design, &load, hi, &at, tail)
    }))
}

/// Entries a flush holds: the buffer is frozen once it holds M_B/2 or more, after the entry that reaches it.
fn entries_per_flush(design: &Design, sizes: Sizes) -> f64 {
    (design.flush_bytes() as f64 / sizes.buffer_entry)
        .ceil()
        .max(1.0)
}

/// A load's sizes in the simulation's bytes.
struct Load {
    /// Data bytes of a full buffer's run.
    flush_run: u64,
    /// Data bytes of the whole load.
    total: u64,
    /// Fence memory per data byte.
    per_byte: f64,
    /// Sizes with the filters' share in the entry's disk bytes.
    sizes: Sizes,
}

/// An entry's bytes in a file: its data and fence share, and its share of the filters (M_BF spread over the
/// entries, at most the engine's bits per key).
fn sizes_disk(design: &Design, entries: f64, sizes: Sizes) -> f64 {
    sizes.disk_entry + (design.filter_bytes as f64 / entries).min(MAX_BITS_PER_KEY / 8.0)
}

impl Load {
    fn of(design: &Design, entries: f64, sizes: Sizes) -> Option<Self> {
        let per_flush = entries_per_flush(design, sizes);
        let ok = |x: f64| x > 0.0 && x.is_finite();
        if !ok(entries)
            || !ok(sizes.disk_entry)
            || !ok(sizes.data_entry)
            || !ok(per_flush)
            || entries / per_flush > MAX_FLUSHES
        {
            return None;
        }
        let sizes = Sizes {
            disk_entry: sizes_disk(design, entries, sizes),
            ..sizes
        };
        Some(Load {
            flush_run: (per_flush * sizes.disk_entry).round().max(1.0) as u64,
            total: (entries * sizes.disk_entry).round().max(1.0) as u64,
            per_byte: sizes.fence_per_entry.max(0.0) / sizes.disk_entry,
            sizes,
        })
    }
}

/// `simulate`'s trees, memoised on this thread by what they depend on (`kind` tells the callers apart).
fn memoised(
    design: &Design,
    load: &Load,
    kind: u64,
    simulate: impl FnOnce() -> Vec<Vec<LoadedRun>>,
) -> Rc<Vec<Vec<LoadedRun>>> {
    let key = MemoKey::of(design, load, kind);
    if let Some(hit) = LOADED.with(|m| m.borrow().get(&key).cloned()) {
        return hit;
    }
    let trees = Rc::new(simulate());
    LOADED.with(|m| {
        let mut m = m.borrow_mut();
        if m.len() >= MEMO_SIZE {
            m.clear();
        }
        m.insert(key, trees.clone());
    });
    trees
}

/// How outputs are cut into files in the simulation of `load`: as the engine's writer cuts them, or into
/// [`MAX_FILES`] of the whole data at most.
fn cut_of(design: &Design, load: &Load) -> Cut {
    let sizes = load.sizes;
    // the writer cuts a file after the entry whose data blocks reach the file size
    let per_file = (design.file_bytes as f64 / sizes.data_entry)
        .ceil()
        .max(1.0);
    let engine = (per_file * sizes.disk_entry).round() as u64;
    let coarsest = (load.total as f64 / MAX_FILES).ceil() as u64;
    Cut {
        files: Files {
            data_bytes: engine.max(coarsest).max(1),
            overhead: sizes.file_overhead,
        },
        engine_files: engine >= coarsest,
    }
}

/// How a simulation cuts its outputs, and whether that is as the engine cuts them.
struct Cut {
    files: Files,
    /// The files are the engine's (the data set is at most [`MAX_FILES`] of them).
    engine_files: bool,
}

/// Settles `levels` after a flush: the planner's plans carried out until it has none, with the hot levels
/// decided as the engine decides them (its runs' fences resident newest first while M_FP lasts), and each
/// merge keeping one version of a key when `versions` says what the files are made of.
fn settle(
    design: &Design,
    load: &Load,
    cut: Files,
    levels: &mut Vec<LevelView>,
    ids: &mut Ids,
    mut versions: Option<&mut Versions>,
) {
    for _ in 0..MAX_PLANS_PER_FLUSH {
        let hot = residency(levels, design.fence_bytes, |f| {
            (f.bytes.saturating_sub(cut.overhead) as f64 * load.per_byte).round() as u64
        })
        .hot_levels;
        let p = plan(levels, &Policy::of(design, hot));
        if p == Plan::Nothing {
            break;
        }
        *levels = match versions.as_deref_mut() {
            Some(v) => apply_keeping_versions(&p, levels, cut, ids, v),
            None => apply(&p, levels, cut, ids),
        };
    }
}

/// The share of the key line a run's files cover.
fn covered(run: &RunView) -> f64 {
    let space = u64::MAX as f64 + 1.0;
    run.files
        .iter()
        .map(|f| {
            let (lo, hi) = (key_num(&f.min_key), key_num(&f.max_key));
            (hi.saturating_sub(lo) as f64 + 1.0) / space
        })
        .sum::<f64>()
        .min(1.0)
}

/// Flushes `flushes` full buffers through the planner, one at a time, each settled before the next, and
/// returns the tree after each flush count in `at` (ascending, 1-based), with a last flush of `tail(k)` bytes
/// for the k-th settled on a copy first when there is one (the settle flushes what the last buffer held).
fn simulate_load(
    design: &Design,
    load: &Load,
    flushes: usize,
    at: &[usize],
    tail: impl Fn(usize) -> Option<u64>,
) -> Vec<Vec<LoadedRun>> {
    let sizes = load.sizes;
    let cut = cut_of(design, load).files;
    let flush = |levels: &mut Vec<LevelView>, ids: &mut Ids, bytes: u64| {
        if levels.is_empty() {
            levels.push(Vec::new());
        }
        levels[0].insert(0, run_over(ids, bytes, 0, u64::MAX, cut));
        settle(design, load, cut, levels, ids, None);
    };
    let mut levels: Vec<LevelView> = Vec::new();
    let mut ids = Ids::default();
    let mut trees = Vec::with_capacity(at.len());
    for done in 0..=flushes {
        if done > 0 {
            flush(&mut levels, &mut ids, load.flush_run);
        }
        if let Some(k) = at.iter().position(|&a| a == done) {
            let tree = match tail(k) {
                Some(bytes) => {
                    let (mut last, mut last_ids) = (levels.clone(), Ids::after(&levels));
                    flush(&mut last, &mut last_ids, bytes);
                    runs_of(&last, cut, sizes)
                }
                None => runs_of(&levels, cut, sizes),
            };
            trees.push(tree);
        }
    }
    trees
}

/// The runs of a simulated tree.
fn runs_of(levels: &[LevelView], cut: Files, sizes: Sizes) -> Vec<LoadedRun> {
    let all: Vec<(usize, &RunView)> = levels
        .iter()
        .enumerate()
        .flat_map(|(i, level)| level.iter().map(move |run| (i + 1, run)))
        .collect();
    all.iter()
        .enumerate()
        .map(|(j, &(level, run))| LoadedRun {
            level,
            entries: data_bytes(run, cut.overhead) as f64 / sizes.disk_entry,
            coverage: covered(run),
            within: all[..j]
                .iter()
                .map(|(_, above)| within(run, above))
                .collect(),
        })
        .collect()
}

/// The share of `run`'s bytes whose keys lie in one of `above`'s files, each file's keys spread evenly over
/// its range (files of a run are in key order and disjoint).
fn within(run: &RunView, above: &RunView) -> f64 {
    let total: u64 = run.files.iter().map(|f| f.bytes).sum();
    if total == 0 {
        return 0.0;
    }
    let range = |f: &FileView| (key_num(&f.min_key), key_num(&f.max_key));
    let mut inside = 0.0;
    let mut k = 0;
    for f in &run.files {
        let (lo, hi) = range(f);
        // skip the files above that end before this one starts
        while k < above.files.len() && range(&above.files[k]).1 < lo {
            k += 1;
        }
        let mut overlap = 0.0;
        for a in above.files[k..].iter().map(range).take_while(|a| a.0 <= hi) {
            overlap += (hi.min(a.1) - lo.max(a.0)) as f64 + 1.0;
        }
        inside += f.bytes as f64 * (overlap / ((hi - lo) as f64 + 1.0)).min(1.0);
    }
    inside / total as f64
}

/// A run's bytes less its files' overhead.
fn data_bytes(run: &RunView, overhead: u64) -> u64 {
    run.files
        .iter()
        .map(|f| f.bytes.saturating_sub(overhead))
        .sum()
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
    numbers: [u64; 14],
    kinds: (Compaction, RunStrategy, FilePicking),
}

impl MemoKey {
    fn of(d: &Design, load: &Load, kind: u64) -> Self {
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
                load.total,
                load.flush_run,
                load.sizes.file_overhead,
                load.per_byte.to_bits(),
                load.sizes.data_entry.to_bits(),
                kind,
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
    static LOADED: RefCell<FxHashMap<MemoKey, Rc<Vec<Vec<LoadedRun>>>>> = RefCell::new(FxHashMap::default());
}

mod writes;
#[cfg(test)]
use writes::{inserting, merge_cycle, whole_span};
pub use writes::{under_writes, UnderWrites, WritePhase, MAX_WRITE_FLUSHES, RUN_PHASE_SLACK};

#[cfg(test)]
mod tests;

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

/// Flushes beyond which a load and the writes after it are not simulated for [`under_writes`].
pub const MAX_WRITE_FLUSHES: f64 = 4096.0;

/// Share of the flushes by which the simulation may miss where the engine's levels are in their fill cycles
/// (the engine's flushes differ from the model's by a few entries, and its merges run beside the writer): the
/// flushes averaged over widen by it either side.
const WRITE_PHASE_SLACK: f64 = 0.05;

/// Share of the flushes by which the window over which [`UnderWrites::runs`] averages widens either side of
/// the workload's own writes.
pub const RUN_PHASE_SLACK: f64 = 0.01;

/// What the load and the writes after it make of the tree, as the planner runs it ([`under_writes`]).
#[derive(Clone, Debug, PartialEq)]
pub struct UnderWrites {
    /// The share of the key line each level's files cover (level 1 first), on average.
    pub covered: Vec<f64>,
    /// Entries a write costs in flushes and merges, read and written (the flush's run written, each merge's
    /// inputs read and its output written; a file moved down as it is costs nothing), on average.
    pub moved_per_write: f64,
    /// The runs each level holds (level 1 first), on average over the flushes of the workload's own writes
    /// (widened by [`RUN_PHASE_SLACK`] only): where its levels are in their fill cycles when the operations
    /// run. A level's cycle can be longer than the operations, and then its phase, not its cycle's mean,
    /// is what a lookup meets (seed 1 #9, T = 8, K = 6, Z = 7 after 300,000 updates: levels 2 and 3 held
    /// 5 runs each at the run's end, as the simulation had them, where a cycle's mean is 2.5).
    pub runs: Vec<f64>,
    /// The entries each level holds (level 1 first, versions of a key in several runs counted in each), on
    /// average over the same flushes as [`UnderWrites::runs`].
    pub entries: Vec<f64>,
    /// How the runs each level holds spread over the same flushes (level 1 first): per level, the share of
    /// those flushes after which it held 0, 1, 2, .. runs. A window that spans much of a level's fill cycle
    /// meets it at many run counts, and what a lookup pays is not the price of their mean.
    pub run_counts: Vec<Vec<f64>>,
}

/// The share of the key line each level's files cover (level 1 first), on average over the flushes of the
/// writes from `writes.0` to `writes.1` after a load of `entries` keys: a lookup whose key lies outside every
/// file of a level skips it. A level that partial compaction feeds file by file and pushes down file by file
/// covers what its files have not yet taken down, and is empty part of its cycle when its data is about a
/// file (a T = 2 design's upper levels: seed 17 #16's six upper levels were read by 37-91% of the lookups
/// that reached them). Merges keep one version of each key ([`Versions`]), so the tree holds the data set
/// and the versions its upper levels keep, not every write. None when the load and the writes take more than
/// [`MAX_WRITE_FLUSHES`] flushes, or a flush's writes are not known.
pub fn under_writes(
    design: &Design,
    entries: f64,
    sizes: Sizes,
    writes: (f64, f64),
    parts: &[KeyPart],
    inserts: f64,
) -> Option<Rc<UnderWrites>> {
    // (inserts reach new keys, each distinct: the parts of an unbounded universe; updates reach the data
    // set's keys as their distribution does, hot keys again and again)
    let parts = &*inserting(parts, inserts);
    let inserted: f64 = parts
        .iter()
        .filter(|p| !p.universe.is_finite())
        .map(|p| p.put)
        .sum();
    let per_flush = entries_per_flush(design, sizes);
    // the store holds `entries` when the writes end, the keys its inserts added among them: the load put
    // the rest (a YCSB-D store of 30,000 records and 30,000 inserts since holds 60,000 keys; loading 60,000
    // and inserting 30,000 more on top priced a tree of 90,000)
    let entries = (entries - inserted.clamp(0.0, 1.0) * writes.1.max(0.0)).max(per_flush);
    let load = Load::of(design, entries, sizes)?;
    // (the cheap gates first: the engine's own files, and not more flushes than the load's and the writes'
    // at one write a flush's entry at least)
    if !cut_of(design, &load).engine_files {
        return None;
    }
    // the load's full buffers, then what its last buffer held (the settle flushes it)
    let load_flushes = (entries.round() / per_flush).ceil();
    if load_flushes + writes.1.max(0.0) / per_flush > MAX_WRITE_FLUSHES {
        return None;
    }
    let existing: Vec<KeyPart> = parts
        .iter()
        .filter(|p| p.universe.is_finite())
        .copied()
        .collect();
    let flush_writes = writes_to_fill(parts, per_flush)?.max(per_flush);
    let ok = |x: f64| x >= 0.0 && x.is_finite();
    if !(ok(flush_writes) && ok(writes.0) && ok(writes.1)) {
        return None;
    }
    // (where the engine's levels are in their cycles is known to within a share of the flushes, as an LSH
    // design's first level is: `crate::dist`'s PHASE_SLACK; the window widens by it)
    let slack = WRITE_PHASE_SLACK * (load_flushes + writes.1 / flush_writes);
    let first = (writes.0 / flush_writes - slack).floor().max(0.0);
    let last = (writes.1 / flush_writes + slack).ceil().max(first + 1.0);
    // (the runs' window, inside it)
    let run_slack = RUN_PHASE_SLACK * (load_flushes + writes.1 / flush_writes);
    let runs_window = (
        (writes.0 / flush_writes - run_slack).floor().max(first),
        (writes.1 / flush_writes + run_slack).ceil().min(last),
    );
    let runs_window = (runs_window.0, runs_window.1.max(runs_window.0 + 1.0));
    // (only at the engine's own file granularity: a data set of more than MAX_FILES files is simulated in
    // coarser files, whose ranges say little of what the engine's cover, and is too many flushes for a
    // search's every design)
    if load_flushes + last > MAX_WRITE_FLUSHES {
        return None;
    }
    let n = entries.max(1.0);
    let key = (
        MemoKey::of(design, &load, 2),
        flush_writes.to_bits(),
        distinct_after(&existing, flush_writes).to_bits(),
        n.to_bits(),
        inserted.to_bits(),
        (first as u64, last as u64),
        (runs_window.0 as u64, runs_window.1 as u64),
    );
    if let Some(hit) = COVERED.with(|m| m.borrow().get(&key).cloned()) {
        return Some(hit);
    }
    let flush = Mix {
        loaded: inserted.clamp(0.0, 1.0) * flush_writes / n,
        written: flush_writes / n,
    };
    let simulated = simulate_writes(
        design,
        &load,
        load_flushes as usize,
        (
            flush,
            Box::new(move |w| distinct_after(&existing, w * n) / n),
        ),
        (first as usize, last as usize),
        (runs_window.0 as usize, runs_window.1 as usize),
    );
    let covered = Rc::new(UnderWrites {
        covered: simulated.covered,
        moved_per_write: simulated.moved / load.sizes.disk_entry / flush_writes,
        runs: simulated.runs,
        entries: simulated.entries,
        run_counts: simulated.run_counts,
    });
    COVERED.with(|m| {
        let mut m = m.borrow_mut();
        if m.len() >= MEMO_SIZE {
            m.clear();
        }
        m.insert(key, covered.clone());
    });
    Some(covered)
}

/// `parts` with the share `inserts` of the writes in a part of new keys: a key space that spreads every write
/// over the data set's keys (YCSB-D's: its reads and writes by how recent a key is) has its updates scaled to
/// the rest. Its inserts would otherwise rewrite keys the load holds, and a tiered last level keep their
/// versions: seed 19 #4, YCSB-D on T = 12, K = 6, Z = 3, held 75,580 entries at its last level where the engine
/// held its 60,191 keys.
fn inserting(parts: &[KeyPart], inserts: f64) -> Cow<'_, [KeyPart]> {
    let inserts = if inserts.is_finite() {
        inserts.clamp(0.0, 1.0)
    } else {
        0.0
    };
    let put = |new: bool| {
        parts
            .iter()
            .filter(|p| p.universe.is_infinite() == new)
            .map(|p| p.put)
            .sum::<f64>()
    };
    let (new_put, old_put) = (put(true), put(false));
    if inserts <= new_put + 1e-9 || old_put <= 0.0 {
        return Cow::Borrowed(parts);
    }
    let scale = (1.0 - inserts) / old_put;
    let new_get: f64 = parts
        .iter()
        .filter(|p| p.universe.is_infinite())
        .map(|p| p.get)
        .sum();
    parts
        .iter()
        .filter(|p| p.universe.is_finite())
        .map(|p| KeyPart::new(p.universe, p.put * scale, p.get, p.alpha))
        .chain(std::iter::once(KeyPart::new(
            f64::INFINITY,
            inserts,
            new_get,
            AlphaForm::Linear,
        )))
        .collect::<Vec<_>>()
        .into()
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

/// What [`simulate_writes`] averages.
struct Simulated {
    /// Each level's covered share of the key line.
    covered: Vec<f64>,
    /// Bytes moved a flush.
    moved: f64,
    /// Each level's runs.
    runs: Vec<f64>,
    /// Each level's entries.
    entries: Vec<f64>,
    /// Each level's run counts: the share of the window's flushes after which it held 0, 1, .. runs.
    run_counts: Vec<Vec<f64>>,
}

/// The load's full buffers flushed and settled one at a time, then `last` flushes of writes, each a run of
/// one buffer's distinct keys over the whole key line, merged keeping one version of a key; each level's
/// covered share of the key line and the bytes moved after every write flush from `first` on, averaged, and
/// each level's runs after every flush of `runs_window` (inside `first..=last`).
fn simulate_writes(
    design: &Design,
    load: &Load,
    load_flushes: usize,
    (flushed, reached): (Mix, Box<dyn Fn(f64) -> f64>),
    (first, last): (usize, usize),
    runs_window: (usize, usize),
) -> Simulated {
    let cut = cut_of(design, load).files;
    let mut levels: Vec<LevelView> = Vec::new();
    let mut ids = Ids::default();
    let flush = |levels: &mut Vec<LevelView>, ids: &mut Ids, bytes: u64| {
        if levels.is_empty() {
            levels.push(Vec::new());
        }
        levels[0].insert(0, run_over(ids, bytes, 0, u64::MAX, cut));
    };
    // the load: its full buffers, then the rest its last buffer held
    let mut left = load.total;
    for _ in 0..load_flushes {
        let bytes = left.min(load.flush_run);
        if bytes == 0 {
            break;
        }
        left -= bytes;
        flush(&mut levels, &mut ids, bytes);
        settle(design, load, cut, &mut levels, &mut ids, None);
    }
    let space = u64::MAX as f64 + 1.0;
    let mut versions = Versions {
        mixes: Default::default(),
        full: load.total as f64 / space,
        reached,
        io: (0, 0),
    };
    let mut sums: Vec<f64> = Vec::new();
    let mut run_sums: Vec<f64> = Vec::new();
    let mut entry_sums: Vec<f64> = Vec::new();
    let mut run_counts: Vec<Vec<f64>> = Vec::new();
    let mut moved = 0.0;
    for done in 1..=last {
        flush(&mut levels, &mut ids, load.flush_run);
        for f in &levels[0][0].files {
            versions.mixes.insert(f.id, flushed);
        }
        let before = versions.io;
        settle(
            design,
            load,
            cut,
            &mut levels,
            &mut ids,
            Some(&mut versions),
        );
        if done > first {
            moved += (load.flush_run + versions.io.0 - before.0 + versions.io.1 - before.1) as f64;
            if sums.len() < levels.len() {
                sums.resize(levels.len(), 0.0);
            }
            for (i, level) in levels.iter().enumerate() {
                sums[i] += level.iter().map(covered).fold(0.0, f64::max);
            }
        }
        if done > runs_window.0 && done <= runs_window.1 {
            if run_sums.len() < levels.len() {
                run_sums.resize(levels.len(), 0.0);
                entry_sums.resize(levels.len(), 0.0);
                run_counts.resize(levels.len(), Vec::new());
            }
            for (i, level) in levels.iter().enumerate() {
                run_sums[i] += level.len() as f64;
                if run_counts[i].len() <= level.len() {
                    run_counts[i].resize(level.len() + 1, 0.0);
                }
                run_counts[i][level.len()] += 1.0;
                entry_sums[i] += level
                    .iter()
                    .map(|r| data_bytes(r, cut.overhead) as f64)
                    .sum::<f64>()
                    / load.sizes.disk_entry;
            }
        }
        // (files merged away are forgotten)
        if done % 64 == 0 {
            let live: std::collections::HashSet<u64> = levels
                .iter()
                .flatten()
                .flat_map(|r| r.files.iter().map(|f| f.id))
                .collect();
            versions.mixes.retain(|id, _| live.contains(id));
        }
    }
    let n = (last - first).max(1) as f64;
    let n_runs = runs_window.1.saturating_sub(runs_window.0).max(1) as f64;
    Simulated {
        covered: sums.iter().map(|s| s / n).collect(),
        moved: moved / n,
        runs: run_sums.iter().map(|s| s / n_runs).collect(),
        entries: entry_sums.iter().map(|s| s / n_runs).collect(),
        run_counts: run_counts
            .iter()
            .map(|c| c.iter().map(|k| k / n_runs).collect())
            .collect(),
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

/// What [`under_writes`] depends on: the load's, the writes' flush and the keys it reaches, the data set, the
/// inserts' share, the flushes averaged (all, and the runs').
type CoveredKey = (MemoKey, u64, u64, u64, u64, (u64, u64), (u64, u64));

/// Loaded trees a thread keeps (all are dropped when it fills up).
const MEMO_SIZE: usize = 1 << 12;

thread_local! {
    /// [`loaded_runs`]' results on this thread: a search prices many designs that share a shape and differ in
    /// the memory they give filters or an entry cache.
    static LOADED: RefCell<FxHashMap<MemoKey, Rc<Vec<Vec<LoadedRun>>>>> = RefCell::new(FxHashMap::default());
    /// [`under_writes`]' results on this thread (the validation prices a cell's slices one by one).
    static COVERED: RefCell<FxHashMap<CoveredKey, Rc<UnderWrites>>> = RefCell::new(FxHashMap::default());
}

#[cfg(test)]
mod tests;

//! The tree under a workload's writes: the load, then the writes' flushes, each settled by the planner as the
//! engine settles it ([`under_writes`]), and what a window of those writes moves and meets. A window shorter
//! than the cycle of the merges into the deepest level meets them at a phase the engine's speeds decide, so
//! it is priced at the cycle's mean ([`WritePhase`]), unless the writer waits for every merge.

use super::*;

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
    /// Writes between two of the biggest merges, those into the deepest level (the longest gap the
    /// simulation met between two), where it met two: a window of fewer writes meets that merge or not by
    /// its phase, so what it measures swings about the mean priced ([`WritePhase::CycleMean`]).
    pub cycle_writes: Option<f64>,
    /// How the runs each level holds spread over the same flushes (level 1 first): per level, the share of
    /// those flushes after which it held 0, 1, 2, .. runs. A window that spans much of a level's fill cycle
    /// meets it at many run counts, and what a lookup pays is not the price of their mean.
    pub run_counts: Vec<Vec<f64>>,
}

/// Which phase of its levels' merge cycles a window of writes is priced at ([`under_writes`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum WritePhase {
    /// The mean over whole cycles of the biggest merges (those into the deepest level, see `merge_cycle`):
    /// a window shorter than their cycle meets them at a phase no model knows, since an engine whose merges
    /// run beside the writer leaves a load elsewhere in its cycles than a settled one (see `whole_span`).
    /// The expectation over the phases a real engine may be at.
    #[default]
    CycleMean,
    /// The phase the planner's simulation gives, loaded and written one settled flush at a time: a writer
    /// that waits for every flush's merges (`cosine validate --pace merged`) meets exactly it.
    Simulated,
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
    phase: WritePhase,
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
        phase,
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
        phase,
    );
    let covered = Rc::new(UnderWrites {
        covered: simulated.covered,
        moved_per_write: simulated.moved / load.sizes.disk_entry / flush_writes,
        cycle_writes: simulated.cycle.map(|c| c as f64 * flush_writes),
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
pub(super) fn inserting(parts: &[KeyPart], inserts: f64) -> Cow<'_, [KeyPart]> {
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

/// Share of the most bytes any write flush moved from which a flush counts as one of its cycle's big merges
/// ([`merge_cycle`]).
const BIG_MERGE: f64 = 0.5;

/// Flushes between two of the big merges in `moved` (the bytes each write flush moved, its own run
/// included): those of flushes that moved at least [`BIG_MERGE`] of the most any did, the longest gap
/// between two, where two came. The biggest merges are those into the deepest level that rewrite the most
/// (a leveled last level taking a push, a tiered one merging its Z runs); a flush that only writes its run,
/// or a partial compaction that moves a few files at every flush, counts as one when no bigger merge came, so
/// a smooth history has a cycle of one flush.
pub(super) fn merge_cycle(moved: &[f64]) -> Option<usize> {
    let most = moved.iter().copied().fold(0.0, f64::max);
    if !(most > 0.0) {
        return None;
    }
    let at: Vec<usize> = (0..moved.len())
        .filter(|&i| moved[i] >= BIG_MERGE * most)
        .collect();
    at.windows(2).map(|w| w[1] - w[0]).max().map(|c| c.max(1))
}

/// The flushes over which the bytes moved per flush are averaged, from the window's first: a whole number
/// of the cycles of `moved`'s big merges ([`merge_cycle`], flush i + 1's bytes at i), the nearest to the
/// window's `(first, last]`, at least one; None until `moved` holds two big merges and those whole cycles
/// from `first` (the caller then simulates further, or takes the window as it is). A window shorter than that cycle meets its big merge or not by its phase, which no
/// model can know: a load the engine took as fast as it came leaves its levels elsewhere in their cycles than
/// a settled one (a 2,000,000-record YCSB-A load of an LSH design, T = 7, K = 6, left 525 MiB at level 1
/// where the simulation's left none), and windows of 500,000 writes after it measured 0.14 to 2.38 blocks a
/// write, the cycle's mean 1.74. Priced at its phase, a window is right only for the phase the simulation
/// happens to share; priced over whole cycles, it is the mean over every phase it could meet.
pub(super) fn whole_span(moved: &[f64], first: usize, last: usize) -> Option<usize> {
    let window = last.saturating_sub(first).max(1);
    let cycle = merge_cycle(moved)?;
    let span = ((window as f64 / cycle as f64).round() as usize).max(1) * cycle;
    (moved.len() >= first + span).then_some(span)
}

/// What [`simulate_writes`] averages.
struct Simulated {
    /// Each level's covered share of the key line.
    covered: Vec<f64>,
    /// Bytes moved a flush.
    moved: f64,
    /// Flushes between two big merges ([`merge_cycle`]), if two came.
    cycle: Option<usize>,
    /// Each level's runs.
    runs: Vec<f64>,
    /// Each level's entries.
    entries: Vec<f64>,
    /// Each level's run counts: the share of the window's flushes after which it held 0, 1, .. runs.
    run_counts: Vec<Vec<f64>>,
}

/// The load's full buffers flushed and settled one at a time, then `last` flushes of writes, each a run of
/// one buffer's distinct keys over the whole key line, merged keeping one version of a key; each level's
/// covered share of the key line after every write flush of `(first, last]`, averaged, and its runs after
/// every flush of `runs_window` (inside it); and the bytes moved a flush, averaged over the window's flushes
/// (`WritePhase::Simulated`) or over whole cycles of the big merges from `first` on (`CycleMean`: past `last`
/// if need be, up to `last` plus the window or 64 flushes, whichever is more; where that shows no whole
/// cycle, over the window). Flushes past the window add what the window's do: under inserts, keys the
/// workload's own writes would not have added yet.
fn simulate_writes(
    design: &Design,
    load: &Load,
    load_flushes: usize,
    (flushed, reached): (Mix, Box<dyn Fn(f64) -> f64>),
    (first, last): (usize, usize),
    runs_window: (usize, usize),
    phase: WritePhase,
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
    // bytes moved after each write flush
    let mut moved: Vec<f64> = Vec::new();
    // (past the window, the flushes that find the big merges' cycle, within the simulation's bound)
    let most = match phase {
        WritePhase::Simulated => last,
        WritePhase::CycleMean => (last + last.saturating_sub(first).max(64))
            .min((MAX_WRITE_FLUSHES as usize).saturating_sub(load_flushes))
            .max(last),
    };
    let mut done = 0;
    while done < last || (done < most && whole_span(&moved, first, last).is_none()) {
        done += 1;
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
        moved.push((load.flush_run + versions.io.0 - before.0 + versions.io.1 - before.1) as f64);
        if done > first && done <= last {
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
    let window = last.saturating_sub(first).max(1);
    let span = match phase {
        WritePhase::CycleMean => whole_span(&moved, first, last).unwrap_or(window),
        WritePhase::Simulated => window,
    };
    let cycle = merge_cycle(&moved);
    let moved = moved.iter().skip(first).take(span).sum::<f64>() / span as f64;
    let n_runs = runs_window.1.saturating_sub(runs_window.0).max(1) as f64;
    Simulated {
        covered: sums.iter().map(|s| s / window as f64).collect(),
        moved,
        cycle,
        runs: run_sums.iter().map(|s| s / n_runs).collect(),
        entries: entry_sums.iter().map(|s| s / n_runs).collect(),
        run_counts: run_counts
            .iter()
            .map(|c| c.iter().map(|k| k / n_runs).collect())
            .collect(),
    }
}

/// What [`under_writes`] depends on: the load's, the writes' flush and the keys it reaches, the data set, the
/// inserts' share, the flushes averaged (all, and the runs').
type CoveredKey = (
    MemoKey,
    u64,
    u64,
    u64,
    u64,
    (u64, u64),
    (u64, u64),
    WritePhase,
);

thread_local! {
    /// [`under_writes`]' results on this thread (the validation prices a cell's slices one by one).
    static COVERED: RefCell<FxHashMap<CoveredKey, Rc<UnderWrites>>> = RefCell::new(FxHashMap::default());
}

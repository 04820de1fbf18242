//! The write price (σ_p, and with it blind updates and read-modify-writes): the blocks the engine's flushes
//! and compactions read and write per write, level by level as its planner merges ([`engine_write_cost`]).

use crate::dist::flow::{writes, written, written_before};
use crate::dist::lsh::Log;
use crate::dist::met::simulate_writes;
use crate::dist::met::MetTree;
use crate::dist::reference::insert_cost;
use crate::dist::LshEngine;
use crate::keys::{distinct_after, writes_to_fill, KeyPart, KeySpace};
use crate::layout::DataShape;
use crate::quirks::ReferenceQuirks;
use cosine_design::{Compaction, Design, FilePicking, Workload};

/// σ_p of a tree-shaped design: the blocks a write moves in the planner's simulation of the writes where it
/// runs on a design whose levels partial compaction empties file by file (which files a moved file overlaps,
/// and which of them move down as they are, follow from where the data lies, which the closed form takes from
/// a rule per picking); else the closed form over the levels the planner writes ([`engine_write_cost`]).
pub(super) fn tree_write(
    design: &Design,
    workload: &Workload,
    keys: &KeySpace,
    parts: &[KeyPart],
    shape: &DataShape,
    met: &MetTree,
    q: &ReferenceQuirks,
) -> f64 {
    let tree = &met.tree;
    let b = shape.entries_per_block;
    if q.table2_write_cost {
        return insert_cost(tree, keys, parts, q);
    }
    if let (Some(u), Compaction::Partial) = (&met.under_writes, design.compaction) {
        return u.moved_per_write / b;
    }
    engine_write_cost(
        &write_levels(design, tree.l, tree.last_hot(), shape.entry_bytes, q),
        tree.eb,
        b,
        parts,
        met.stored.effective_entries,
        written_before(workload)..written(workload),
        q.levels_always_fill,
    )
}

/// σ_p of an LSH design: a write is appended to the log; the log's level is pushed down (its runs read, their
/// distinct keys written as one run below) once it holds K runs or θ of its capacity: what the planner's
/// simulation of the load and the writes since moves where it runs (our engine's log compacting partially,
/// with flushes of what the hash-log buffer holds), else the closed form over the levels the log's versions
/// fill ([`engine_write_cost`]).
pub(super) fn log_write(
    design: &Design,
    workload: &Workload,
    shape: &DataShape,
    log: &Log,
    q: &ReferenceQuirks,
    (engine, phase): (LshEngine, crate::loaded::WritePhase),
) -> f64 {
    if let Some(u) = log_simulated(design, workload, shape, log, q, (engine, phase)) {
        return u.moved_per_write / shape.entries_per_block;
    }
    let levels = log.ages.levels();
    engine_write_cost(
        &write_levels(design, levels, levels, log.level_entry, q),
        log.eb,
        shape.entries_per_block,
        &log.parts,
        log.ages.versions(),
        written_before(workload)..written(workload),
        q.levels_always_fill,
    )
}

/// The planner's simulation of an LSH design's log under `workload`'s writes, where it runs: our engine's
/// log compacting partially, with flushes of what the hash-log buffer holds.
pub(super) fn log_simulated(
    design: &Design,
    workload: &Workload,
    shape: &DataShape,
    log: &Log,
    q: &ReferenceQuirks,
    (engine, phase): (LshEngine, crate::loaded::WritePhase),
) -> Option<std::rc::Rc<crate::loaded::UnderWrites>> {
    let simulates = design.compaction == Compaction::Partial
        && writes(workload)
        && !q.nominal_loaded_tree
        && !q.table2_write_cost
        && engine.merges_runs()
        && log.eb >= 1.0;
    if !simulates {
        return None;
    }
    simulate_writes(
        design,
        workload,
        shape.entries,
        &log.parts,
        Some(log.eb),
        phase,
    )
}

/// σ_u and σ_w from a write and a lookup: every design writes out of place, so a blind update costs a write
/// and a read-modify-write a lookup and a write (with the reference quirk, an unfiltered design updates a
/// B-tree leaf in place: a lookup and 1/B each).
pub(super) fn updates(
    q: &ReferenceQuirks,
    filtered: bool,
    write: f64,
    lookup: f64,
    entries_per_block: f64,
) -> (f64, f64) {
    if filtered || !q.in_place_unfiltered_updates {
        (write, lookup + write)
    } else {
        let in_place = lookup + 1.0 / entries_per_block;
        (in_place, in_place)
    }
}

/// One level of the tree as our engine's flushes and compactions write it (the planner's rules, in entries).
#[derive(Clone, Copy, Debug)]
pub(super) struct WriteLevel {
    /// Runs the level may hold (1: leveled).
    pub(super) limit: f64,
    /// Entries at which the level is pushed down: θ of its capacity, (M_B/2)·T^i.
    pub(super) push_at: f64,
    /// Pushed down file by file (partial compaction) rather than merged down whole.
    pub(super) partial_out: bool,
    /// Entries of one file the writer cuts (what a partial push moves at a time).
    pub(super) file_entries: f64,
    /// How the file a partial push moves overlaps the level below ([`Overlap`]).
    pub(super) overlap: Overlap,
}

/// How much of the level below a file moved by partial compaction overlaps, by the file-picking rule
/// (quirk `files_overlap_evenly`: every file its even share).
#[derive(Clone, Copy, Debug, PartialEq)]
pub(super) enum Overlap {
    /// Its even share: the level's entries over those of the level it leaves.
    Even,
    /// `dense_fp`: the file of smallest key span, this share of the even one (a simulation of the planner's
    /// rule on keys: 0.55-0.65).
    Dense(f64),
    /// `choose_first`: the file of smallest keys, where the level holds only what arrived since a push last
    /// swept that part of the key space: it spans about this factor (0.85 in the simulation) times the
    /// entries the level moves per arrival, up to one file, over the arrival's entries.
    First(f64),
}

/// `dense_fp`'s share of the even overlap (simulated: 0.55-0.65 over level sizes of 4-16 files and arrivals
/// of 0.25-4 files).
pub(super) const DENSE_OVERLAP: f64 = 0.58;

/// `choose_first`'s span per entry moved per arrival, over the arrival's entries (simulated: 0.83-0.95).
pub(super) const FIRST_SPAN: f64 = 0.85;

/// The levels our engine's planner writes for a tree of `l` levels: level i holds up to K runs above the last
/// hot level `h` and at it when it is not the last, Z below it and at the last level; it is pushed down at θ of
/// (M_B/2)·T^i bytes; partial compaction moves a leveled level into a leveled one file by file where the
/// design's compaction is partial at that level.
pub(super) fn write_levels(
    design: &Design,
    l: u32,
    h: u32,
    entry_bytes: f64,
    quirks: &ReferenceQuirks,
) -> Vec<WriteLevel> {
    let t = design.size_ratio as f64;
    let overlap = if quirks.files_overlap_evenly {
        Overlap::Even
    } else {
        match design.file_picking {
            FilePicking::DenseFp => Overlap::Dense(DENSE_OVERLAP),
            FilePicking::ChooseFirst => Overlap::First(FIRST_SPAN),
            _ => Overlap::Even,
        }
    };
    let file_entries = (design.file_bytes as f64 / entry_bytes).max(1.0);
    let base = design.level_base_bytes() / entry_bytes;
    let limit = |i: u32| {
        if i >= l || i > h {
            design.cold_runs as f64
        } else {
            design.hot_runs as f64
        }
    };
    (1..=l.max(1))
        .map(|i| WriteLevel {
            limit: limit(i),
            push_at: base * t.powi(i as i32),
            partial_out: !design.merges_whole(i) && limit(i) <= 1.0 && limit(i + 1) <= 1.0,
            file_entries,
            overlap,
        })
        .collect()
}

/// The distinct keys a level that fills from empty holds on average while the writes from the `from`-th to
/// the `to`-th arrive: the mean of `distinct_after` over them (Simpson's rule on 8 intervals of the smooth,
/// concave curve; skewed writes reach most of their keys early, so from 0 this is well above half the distinct
/// keys of all of them); the distinct keys of `to` writes when the stretch is empty.
pub(super) fn mean_distinct(parts: &[KeyPart], from: f64, to: f64) -> f64 {
    let from = from.max(0.0);
    if to <= 0.0 {
        return 0.0;
    }
    if to <= from {
        return distinct_after(parts, to);
    }
    const STEPS: usize = 8;
    let h = (to - from) / STEPS as f64;
    let sum: f64 = (0..=STEPS)
        .map(|j| {
            let weight = if j == 0 || j == STEPS {
                1.0
            } else if j % 2 == 1 {
                4.0
            } else {
                2.0
            };
            // (distinct_after(0) = 0: no call for the first point of a stretch from the load)
            if j == 0 && from == 0.0 {
                0.0
            } else {
                weight * distinct_after(parts, from + h * j as f64)
            }
        })
        .sum();
    sum * h / 3.0 / (to - from)
}

/// Blocks our engine reads and writes in flushes and compactions per write (the fixed model's σ_p), for a tree
/// whose levels are `levels`, over `stored` entries (the distinct keys and the versions a tiered last level
/// keeps), over the `writes` (those after the `start`-th up to the `end`-th), with flushes of `eb` entries and
/// `b` entries a block.
///
/// A flush writes the buffer's distinct keys, one per W(eb) writes (W: writes that reach that many distinct
/// keys). Then, level by level, for the runs arriving from above (a flush at level 1):
/// - a tiered level writes each arriving run and reads its runs once when it is pushed down, at its K-th run
///   or θ of its capacity; the pushed run holds the distinct keys of the writes it gathered;
/// - a leveled level reads and rewrites the run each arrival lands in (level 1: the flushed run merges in
///   place): half its push size on average under full compaction (it fills from empty between pushes), all
///   of it under partial compaction, which moves files down one at a time and keeps the level full, and the
///   whole last level, which never empties; a level that its distinct keys cannot fill is never pushed;
/// - a tiered last level holding its Z runs merges two adjacent runs on each arrival, the largest among them
///   (the planner's run window), so each arrival rewrites about all of it.
pub(super) fn engine_write_cost(
    levels: &[WriteLevel],
    eb: f64,
    b: f64,
    parts: &[KeyPart],
    stored: f64,
    writes: std::ops::Range<f64>,
    half_of_written: bool,
) -> f64 {
    let (from, written) = (writes.start, writes.end);
    let fill = |n: f64| writes_to_fill(parts, n);
    // writes per flush; a buffer whose key space never fills it never flushes
    let Some(w0) = fill(eb) else {
        return 0.0;
    };
    let mut per = w0.max(eb);
    let mut arriving = eb;
    let mut entries = 0.0;
    let mut above = 0.0;
    // entries level 1 moves down per flush, once it is pushed (what a flush grows it by)
    let mut src_moved_per_arrival = eb;
    let last = levels.len() - 1;
    for (j, lv) in levels.iter().enumerate() {
        let r = 1.0 / per;
        // the arriving run written: a flush at level 1, else the run a push from above writes here (a push into
        // a leveled level writes it merged, counted below)
        if j == 0 || lv.limit > 1.0 {
            entries += arriving * r;
        }
        let is_last = j == last;
        let into_partial = j > 0 && levels[j - 1].partial_out;
        if lv.limit <= 1.0 {
            let pushes = if is_last { None } else { fill(lv.push_at) };
            let held = if is_last {
                (stored - above).max(arriving)
            } else if into_partial || lv.partial_out {
                lv.push_at
            } else if pushes.is_some() {
                lv.push_at / 2.0
            } else if half_of_written {
                // never pushed, priced as half the distinct keys of all the writes (the reference quirk:
                // from the load, whatever χ₀)
                lv.push_at.min(distinct_after(parts, written)) / 2.0
            } else {
                // never pushed: the level grows to the distinct keys written, from empty; on average over the
                // writes priced it holds the distinct keys of a share of them, which skewed writes reach early
                lv.push_at.min(mean_distinct(parts, from, written))
            };
            entries += if into_partial {
                // file by file: each entry moved reads and rewrites the overlapping files, by the rule that
                // picks the file
                let src = &levels[j - 1];
                let per_entry = match src.overlap {
                    Overlap::Dense(share) => share * held / src.push_at,
                    // the level above is level 1 (its arrivals, flushes, spread over the key space): the file
                    // moved spans the entries it moves per flush over the flush's, of the key space
                    Overlap::First(span) if j == 1 => {
                        let moved = src_moved_per_arrival.min(src.file_entries);
                        (span * moved / eb).min(1.0) * held / src.file_entries
                    }
                    _ => held / src.push_at,
                };
                arriving * (1.0 + 2.0 * per_entry) * r
            } else if j == 0 {
                // the flushed run and the level's run read, both rewritten
                2.0 * (arriving + held) * r
            } else {
                // the level's run read and rewritten with the arrival
                (2.0 * held + arriving) * r
            };
            above += held;
            match pushes {
                Some(w) if !is_last => {
                    // the level's run read once per push (file by file under partial compaction)
                    entries += lv.push_at / w.max(per);
                    if j == 0 {
                        src_moved_per_arrival = lv.push_at * per / w.max(per);
                    }
                    arriving = lv.push_at;
                    per = w.max(per);
                }
                _ => break,
            }
        } else if is_last {
            let held = (stored - above).max(arriving);
            if held / arriving >= lv.limit - 0.5 {
                // every arrival merges a window of two runs, the largest with it
                let window = (held - (lv.limit - 2.0).max(0.0) * arriving).max(arriving);
                entries += 2.0 * window * r;
            }
        } else {
            let n = lv.limit.min((lv.push_at / arriving).ceil()).max(1.0);
            // its runs read once, when pushed down merged
            entries += arriving * r;
            above += (n - 1.0) / 2.0 * arriving;
            let w = n * per;
            arriving = (n * arriving).min(distinct_after(parts, w)).max(1.0);
            per = w;
        }
    }
    entries / b
}

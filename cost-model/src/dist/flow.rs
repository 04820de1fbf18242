//! The flow of entries down the tree: the writes the store has seen, the runs a flush and a push make
//! ([`Arrival`]), a tiered level's fill cycle ([`cycle_runs`]), the writes whose keys a run holds
//! ([`run_writes`]), a level the writes never push ([`never_pushed`]), the versions a tiered last level keeps
//! and its unlike runs ([`group_last_level`]).

use crate::dist::tree::{RunGroupShape, Tree};
use crate::keys::{distinct_after, writes_to_fill, KeyPart};
use crate::layout::{self, DataShape};
use crate::quirks::ReferenceQuirks;
use cosine_design::{Design, RunStrategy, Workload};

/// Writes the store has seen at the workload's end: χ₀ + χ operations (those run before and the workload's
/// own) times the write share.
pub(super) fn written(w: &Workload) -> f64 {
    w.operations_before.saturating_add(w.operations) as f64 * write_share(w)
}

/// Writes the store had seen before the workload's own operations began: χ₀ times the write share.
pub(super) fn written_before(w: &Workload) -> f64 {
    w.operations_before as f64 * write_share(w)
}

pub(super) fn write_share(w: &Workload) -> f64 {
    w.mix.insert + w.mix.blind_update + w.mix.rmw
}

/// Whether the workload writes at all (inserts, updates or read-modify-writes).
pub(super) fn writes(w: &Workload) -> bool {
    w.mix.insert + w.mix.blind_update + w.mix.rmw > 0.0
}

/// Older versions a tiered last level (Z > 1) keeps: each run arriving there holds one push of writes, and
/// runs merge only once the level passes Z runs (two adjacent ones, the pair its run strategy picks), so
/// up to Z − 1 arrivals of updates stay beside it. The updates are the workload's operations times its update
/// share, less those a write buffer absorbed (a buffer keeps one version of a key however often it is written
/// while it fills). One arrival is what the levels above push down at, over the distinct keys' tree.
/// `kept` is the versions the updates leave in the flushes ([`kept_updates`]).
pub(super) fn retained_versions(
    design: &Design,
    shape: &DataShape,
    q: &ReferenceQuirks,
    kept: f64,
    parts: &[KeyPart],
) -> f64 {
    let (t, k, z) = (
        design.size_ratio as f64,
        design.hot_runs as f64,
        design.cold_runs as f64,
    );
    if z <= 1.0 || kept <= 0.0 {
        return 0.0;
    }
    let eb = (q.flush_bytes(design) / shape.entry_bytes).max(1.0);
    let fill = design.merge_threshold.clamp(0.01, 1.0);
    let l = layout::level_count(
        shape.effective_entries,
        shape.entry_bytes,
        design.level_base_bytes(),
        t,
    );
    // one arrival at the last level: a flush when it is level 1, else what level L − 1 is pushed down at
    // (a tiered level's push holds the distinct keys of the writes its runs gathered)
    let mut arriving = Arrival::whole(eb, parts);
    for i in 1..l {
        let capacity = eb * t.powi(i as i32) * fill;
        arriving = if k > 1.0 {
            arriving.merged(k.min((capacity / arriving.entries).ceil()).max(1.0), parts)
        } else {
            Arrival::whole(capacity, parts)
        };
    }
    kept.min((z - 1.0) * arriving.entries)
}

/// The versions the workload's updates (blind and read-modify-write, the operations before it and its own)
/// leave in the flushes: the updates less those a write buffer absorbed (a buffer keeps one version of a key
/// however often it is written while it fills).
pub(super) fn kept_updates(
    design: &Design,
    workload: &Workload,
    shape: &DataShape,
    parts: &[KeyPart],
    q: &ReferenceQuirks,
) -> f64 {
    let m = &workload.mix;
    let updates = workload
        .operations_before
        .saturating_add(workload.operations) as f64
        * (m.blind_update + m.rmw);
    if updates <= 0.0 {
        return 0.0;
    }
    let eb = (q.flush_bytes(design) / shape.entry_bytes).max(1.0);
    let kept = writes_to_fill(parts, eb).map_or(1.0, |w| (eb / w.max(eb)).clamp(0.0, 1.0));
    updates * if kept > 0.0 { kept } else { 1.0 }
}

/// Entries of one run a tiered level pushes down after gathering `n` runs of `entries` entries each, made by
/// `writes` writes in all: the distinct keys among those writes (merging the runs keeps one version of a key
/// written in several of them), no more than the runs' entries. Without the writes (`None`: a workload that
/// does not write, or one whose writes could never fill a flush) or a key space they repeat (`parts` empty or
/// never written) the runs' entries.
pub(super) fn merged_arrival(parts: &[KeyPart], entries: f64, writes: Option<f64>) -> f64 {
    match writes {
        Some(w) if w > 0.0 && parts.iter().any(|p| p.put > 0.0) => {
            distinct_after(parts, w).min(entries)
        }
        _ => entries,
    }
}

/// Writes that reach `n` distinct keys of `parts`, at least `n` ([`writes_to_fill`]; None when they cannot).
pub(super) fn writes_for(parts: &[KeyPart], n: f64) -> Option<f64> {
    writes_to_fill(parts, n).map(|w| w.max(n))
}

/// One run on its way down the levels, as the engine's planner makes it: its entries, the writes that made it
/// (None where they are not known), and, before the merges on the way kept one version of a key, the
/// entries its flushes held and those of the runs merged into it. `parts` is the key space whose repeats a
/// merge drops ([`merged_arrival`]).
#[derive(Clone, Copy, Debug)]
pub(super) struct Arrival {
    pub(super) entries: f64,
    pub(super) writes: Option<f64>,
    pub(super) flushed: f64,
    pub(super) merged_in: f64,
}

impl Arrival {
    /// A run of `capacity` entries made whole: a flush, or a leveled level pushed down at its capacity.
    pub(super) fn whole(capacity: f64, parts: &[KeyPart]) -> Self {
        Arrival {
            entries: capacity,
            writes: writes_for(parts, capacity),
            flushed: capacity,
            merged_in: capacity,
        }
    }

    /// What a tiered level pushes down after gathering `n` of these runs: one run of their distinct keys.
    pub(super) fn merged(self, n: f64, parts: &[KeyPart]) -> Self {
        let merged_in = self.entries * n;
        let writes = self.writes.map(|w| w * n);
        Arrival {
            entries: merged_arrival(parts, merged_in, writes),
            writes,
            flushed: self.flushed * n,
            merged_in,
        }
    }
}

/// The runs a tiered level holds over its fill cycle, as the engine's planner makes them (a level is pushed
/// down when it holds its run limit or θ of its capacity, the last level merges once it passes Z): runs
/// arrive whole, a flush at level 1 and one push from above below it, so a level above the last that is
/// pushed down at its n-th run holds (n − 1)/2 runs on average, each one arrival's entries; the last level
/// holds its entries (what the levels above do not) in runs of one push each, up to Z, and below level 1
/// (with `flowed`, the entries that have flowed down the tree: the keys and the versions the updates leave)
/// the run that made it too, level l − 1 pushed down whole at θ of its capacity, under the arrivals since
/// (what has flowed down to it beyond that run and the levels above). Leveled levels (one run) keep
/// [`steady_state`](super::shape::steady_state)'s half-full run.
pub(super) fn cycle_runs(
    tree: &mut Tree,
    effective_entries: f64,
    fill: f64,
    flowed: Option<f64>,
    parts: &[KeyPart],
) {
    let l = tree.l as usize;
    if l == 0 {
        return;
    }
    // one run arriving at the level: a flush at level 1
    let mut arrival = Arrival::whole(tree.eb, parts);
    tree.input_entries = vec![0.0; l + 1];
    tree.cycle = vec![0.0; l + 1];
    let mut above = 0.0;
    for i in 1..l {
        let limit = tree.limit(i);
        let capacity = tree.eb * tree.t.powi(i as i32) * fill;
        if limit > 1.0 {
            let n = limit.min((capacity / arrival.entries).ceil()).max(1.0);
            // (a level pushed down at its first run holds that run while the push runs)
            tree.runs[i] = if n > 1.0 { (n - 1.0) / 2.0 } else { 1.0 };
            if n > 1.0 {
                tree.cycle[i] = n;
            }
            tree.run_entries[i] = arrival.entries;
            tree.alpha_entries[i] = arrival.entries;
            tree.input_entries[i] = arrival.merged_in;
            arrival = arrival.merged(n, parts);
        } else {
            arrival = Arrival::whole(capacity, parts);
        }
        above += tree.runs[i] * tree.alpha_entries[i];
    }
    let (arriving, flushed) = (arrival.entries, arrival.flushed);
    tree.arrival.0 = arriving;
    tree.arrival_flushed = flushed;
    tree.input_entries[l] = arrival.merged_in;
    if tree.z > 1.0 {
        let last = (effective_entries - above).max(arriving.min(effective_entries));
        // the run that made the level: level l − 1, then the last, pushed down whole once it held θ of its
        // capacity (none at level 1, which flushes fill); the arrivals since lie above it
        let base = match flowed {
            Some(_) if l > 1 => (tree.eb * tree.t.powi(l as i32 - 1) * fill).min(last),
            _ => 0.0,
        };
        tree.last_base = base;
        let runs = if let (true, Some(flowed)) = (base > 0.0, flowed) {
            // the arrivals since: what has flowed down to the level (the versions the updates leave, which
            // the entries priced there may undercount), less what the levels above hold, an arrival taking
            // what its flushes held
            1.0 + ((flowed - above - base) / flushed)
                .max((last - base) / arriving)
                .round()
        } else {
            (last / arriving).round()
        }
        .clamp(1.0, tree.z);
        tree.runs[l] = runs;
        tree.run_entries[l] = last / runs;
        tree.alpha_entries[l] = last / runs;
    }
}

/// The writes whose keys each run holds, which decide α (a key is in the run if one of them wrote it), as
/// [`cycle_runs`] (`cycled`) or [`steady_state`](super::shape::steady_state) shaped the runs: a flush holds the distinct keys of the writes
/// that reach its entries, a tiered level's run is one arrival from above (the writes of the runs merged into
/// it), and a leveled level's run holds half the writes between its pushes on average. Under skewed writes
/// these are more writes than the run has entries, so a hot key is more often in a recent run.
///
/// `base` is level 1's push size over T in entries, as the write cost computes it (`write_levels`), so the
/// two share their solutions of `writes_to_fill`. `repeats` is the key space whose repeats a merge of a tiered
/// level's runs drops (the updates'; empty without updates), which sizes a run pushed down from one.
pub(super) fn run_writes(
    tree: &mut Tree,
    parts: &[KeyPart],
    repeats: &[KeyPart],
    base: f64,
    cycled: bool,
) {
    let l = tree.l as usize;
    let to_fill = |n: f64| writes_for(parts, n);
    // (a run holding every key the writes reach, or more, keeps its entries: the key is there either way)
    let by_entries = |tree: &mut Tree, i: usize| {
        tree.alpha_writes[i] = to_fill(tree.alpha_entries[i]).unwrap_or(tree.alpha_entries[i]);
    };
    let Some(flush) = to_fill(tree.eb) else {
        tree.alpha_writes = tree.alpha_entries.clone();
        return;
    };
    tree.alpha_writes[0] = if tree.alpha_entries[0] > 0.0 {
        flush / 2.0
    } else {
        0.0
    };
    if !cycled {
        for i in 1..=l {
            by_entries(tree, i);
        }
        return;
    }
    // entries and writes of one run arriving at the level, as `cycle_runs` walks it
    let (mut arriving, mut arriving_writes) = (tree.eb, flush);
    for i in 1..l {
        let capacity = base * tree.t.powi(i as i32);
        if tree.limit(i) > 1.0 {
            let n = tree.limit(i).min((capacity / arriving).ceil()).max(1.0);
            tree.alpha_writes[i] = arriving_writes;
            arriving_writes *= n;
            arriving = merged_arrival(repeats, arriving * n, Some(arriving_writes));
        } else if let Some(push) = to_fill(capacity) {
            tree.alpha_writes[i] = push / 2.0;
            (arriving, arriving_writes) = (capacity, push);
        } else {
            // the keys cannot fill it: it holds its entries' writes, and nothing comes below
            for j in i..=l {
                by_entries(tree, j);
            }
            return;
        }
    }
    tree.arrival.1 = arriving_writes;
    // the last level's runs are one arrival each (a larger one holds merged arrivals: its entries'); a
    // leveled last level holds what the levels above do not, the keys not written lately, which its entries
    // price as well (it answers nearly every lookup that reaches it either way)
    if l >= 1 {
        if tree.z > 1.0 && tree.alpha_entries[l] <= arriving * 1.5 {
            // (a run a little larger than one arrival: that arrival's writes, scaled to its entries)
            tree.alpha_writes[l] = arriving_writes * (tree.alpha_entries[l] / arriving).max(1.0);
        } else if tree.z > 1.0 {
            by_entries(tree, l);
        } else {
            tree.alpha_writes[l] = tree.alpha_entries[l];
        }
    }
}

/// A leveled level above the last whose distinct keys cannot reach θ of its capacity is never pushed down
/// (the engine's planner pushes a level by its bytes, and merging a leveled level keeps one version of each
/// key): it grows to every key the writes reach and keeps them, so a lookup of a key written since the tree
/// grew that deep ends there, and the levels below it hold what came down before (the load's data). Its run
/// holds the distinct keys of all `written` writes. The first such level ends the walk: nothing reaches the
/// levels under it any more. Returns whether it found one.
pub(super) fn never_pushed(tree: &mut Tree, parts: &[KeyPart], written: f64, fill: f64) -> bool {
    let l = tree.l as usize;
    if written <= 0.0 {
        return false;
    }
    for i in 1..l {
        // a leveled level (a tiered one is pushed by its runs) whose push size the writes' keys cannot reach,
        // as the write cost decides it (`engine_write_cost`)
        let capacity = tree.eb * tree.t.powi(i as i32) * fill;
        if tree.limit(i) <= 1.0 && writes_to_fill(parts, capacity).is_none() {
            let distinct = distinct_after(parts, written);
            tree.runs[i] = 1.0;
            tree.alpha_entries[i] = distinct;
            tree.alpha_writes[i] = written;
            return true;
        }
    }
    false
}

/// A tiered last level (Z > 1) that has passed Z runs merges two adjacent runs on each arrival, the pair its
/// run strategy picks (the engine's planner, `pick_window`), so its runs stop being alike: under `first` (and
/// `fullest`, whose largest pair is the oldest run and its neighbour, and `none`) the oldest run gathers every
/// arrival that leaves the newest Z − 1, so it holds every key stored and the Z − 1 newer runs one arrival each;
/// under `last_full` the newest run gathers every arrival since the level filled, so it holds every key
/// written since and the rest of the load, and the Z − 1 older runs keep what first arrived, the load's keys
/// (one arrival each, a uniform share of them; below level 1 the oldest of them is the run that made the level,
/// with Z − 2 arrivals after it: three groups). `written` is the writes the store has seen, `distinct` its
/// distinct keys, `flowed` what has flowed down the tree (the keys and the versions the updates left in the
/// flushes), which counts the arrivals. A level below level 1 that has not passed Z runs holds the run that made it (level l − 1
/// pushed down whole, every key stored then) below the arrivals since; a level 1 that has not, its flushes
/// alike; and a tree whose writes stop above the last level ([`never_pushed`]) its runs alike.
pub(super) fn group_last_level(
    tree: &mut Tree,
    strategy: RunStrategy,
    distinct: f64,
    written: f64,
    flowed: f64,
) {
    let l = tree.l as usize;
    let (arriving, arriving_writes) = tree.arrival;
    if l == 0 || tree.z <= 1.0 || arriving <= 0.0 || arriving_writes <= 0.0 || distinct <= 0.0 {
        return;
    }
    let last = tree.runs[l] * tree.alpha_entries[l];
    let base = tree.last_base.min(last);
    // arrivals since the run that made the level (every run of a level that flushes fill is one): what has
    // flowed down to it, its versions included, less what the levels above hold
    let above: f64 = (1..l).map(|i| tree.runs[i] * tree.alpha_entries[i]).sum();
    // (an arrival takes what its flushes held of what has flowed down)
    let flushed = if tree.arrival_flushed > 0.0 {
        tree.arrival_flushed
    } else {
        arriving
    };
    let arrived = ((flowed - above - base) / flushed)
        .max((last - base) / arriving)
        .round();
    let merging = if base > 0.0 {
        arrived + 1.0 > tree.z
    } else {
        last > tree.z * arriving
    };
    // (the entries priced there may hold fewer versions than the arrivals bring: the gathered run keeps at
    // least the run that made the level)
    let gathered_after = |young: f64| (last - young * arriving).max(base).max(arriving.min(last));
    if !merging {
        // not yet merging: the arrivals above the run that made the level, which holds every key stored then
        if base > 0.0 && arrived >= 1.0 {
            let made = gathered_after(arrived);
            tree.last_groups = Some(vec![
                RunGroupShape {
                    runs: arrived,
                    entries: arriving,
                    writes: arriving_writes,
                    share: 0.0,
                    resident: 0.0,
                },
                RunGroupShape {
                    runs: 1.0,
                    entries: made,
                    writes: made,
                    share: 1.0,
                    resident: 0.0,
                },
            ]);
        }
        return;
    }
    let young = tree.z - 1.0;
    let gathered = gathered_after(young);
    let arrivals = RunGroupShape {
        runs: young,
        entries: arriving,
        writes: arriving_writes,
        share: 0.0,
        resident: 0.0,
    };
    tree.last_groups = Some(match strategy {
        // below level 1 the oldest of the runs `last_full` never merges is the run that made the level
        RunStrategy::LastFull if base > 0.0 => {
            let first = (young - 1.0).max(0.0);
            let kept = first * arriving + base;
            let mut groups = vec![RunGroupShape {
                runs: 1.0,
                entries: (last - kept).max(arriving.min(last)),
                writes: written,
                share: (1.0 - kept / distinct).clamp(0.0, 1.0),
                resident: 0.0,
            }];
            if first >= 1.0 {
                groups.push(RunGroupShape {
                    runs: first,
                    writes: 0.0,
                    share: (arriving / distinct).min(1.0 / first),
                    ..arrivals
                });
            }
            groups.push(RunGroupShape {
                runs: 1.0,
                entries: base,
                writes: 0.0,
                share: (base / distinct).min(1.0),
                resident: 0.0,
            });
            groups
        }
        RunStrategy::LastFull => vec![
            RunGroupShape {
                runs: 1.0,
                entries: gathered,
                writes: written,
                share: (1.0 - young * arriving / distinct).clamp(0.0, 1.0),
                resident: 0.0,
            },
            RunGroupShape {
                writes: 0.0,
                share: (arriving / distinct).min(1.0 / young),
                ..arrivals
            },
        ],
        RunStrategy::First | RunStrategy::Fullest | RunStrategy::None => vec![
            arrivals,
            RunGroupShape {
                runs: 1.0,
                entries: gathered,
                writes: gathered,
                share: 1.0,
                resident: 0.0,
            },
        ],
    });
}

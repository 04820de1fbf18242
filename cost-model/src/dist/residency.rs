//! Which runs keep their fences (and filters) in memory: newest first, level by level, while M_FP lasts
//! ([`residency`]); and the points of a level's fill cycle where the mean run count does not price a lookup
//! ([`cycle_phases`]).

use crate::dist::tree::Tree;
use crate::layout::{self, DataShape};
use crate::quirks::ReferenceQuirks;

/// Fence bytes of one run of level `i`, as [`residency`] counts them: what a run holds is the steady state's
/// average under writes; after a load and no writes, its level's share of the keys (as the read-only lookups
/// price them).
pub(super) fn run_fences(tree: &Tree, i: usize, shape: &DataShape, writes: bool) -> f64 {
    let per_entry = shape.key_bytes / shape.entries_per_block.max(1.0);
    let entries = if writes {
        tree.alpha_entries[i]
    } else {
        shape.effective_entries * layout::data_share(i as u32, tree.l, tree.t)
            / tree.runs[i].max(1.0)
    };
    per_entry * entries
}

/// Which runs keep their fences in memory. With `quirks.levels_hot_or_cold`, hot levels whole and cold ones
/// not. Fixed: as our engine walks them, level by level from the top and each level's runs newest first, every
/// run whose fences fit in what M_FP has left, up to the first that does not (of which the leading files that
/// fit): over the entries the steady state's runs hold, versions and the runs a tiered level gathers included,
/// so a tree holding more than its distinct keys goes cold from the bottom even where the nominal levels'
/// fences fit. A resident run below the hot levels keeps its filter too.
pub(super) fn residency(
    tree: &mut Tree,
    fence_bytes: f64,
    filter_bytes: f64,
    shape: &DataShape,
    quirks: &ReferenceQuirks,
    writes: bool,
) {
    let l = tree.l as usize;
    let h = tree.last_hot() as usize;
    tree.resident = (0..=l)
        .map(|i| if i <= h { tree.runs[i] } else { 0.0 })
        .collect();
    tree.hot_fpr = tree.fpr.clone();
    if quirks.levels_hot_or_cold || quirks.cold_levels_hold_no_data {
        return;
    }
    let per_entry = shape.key_bytes / shape.entries_per_block.max(1.0);
    let mut left = fence_bytes;
    for i in 1..=l {
        let per_run = run_fences(tree, i, shape, writes);
        if per_run <= 0.0 {
            tree.resident[i] = tree.runs[i];
            continue;
        }
        // a last level of unlike runs: each group newest first with its own runs' fences
        if let (true, Some(groups)) = (i == l, tree.last_groups.as_mut()) {
            let mut resident = 0.0;
            for g in groups.iter_mut() {
                let per_run = per_entry * g.entries;
                g.resident = if per_run <= 0.0 {
                    g.runs
                } else {
                    (left.max(0.0) / per_run).min(g.runs)
                };
                left -= g.resident * per_run.max(0.0);
                resident += g.resident;
                if g.resident < g.runs {
                    left = 0.0;
                }
            }
            tree.resident[i] = resident;
            break;
        }
        let fit = (left.max(0.0) / per_run).min(tree.runs[i]);
        tree.resident[i] = fit;
        left -= fit * per_run;
        if fit < tree.runs[i] {
            tree.resident[i + 1..].iter_mut().for_each(|r| *r = 0.0);
            break;
        }
    }
    // a resident run below the hot levels: its own level's filter, as `refilter` gave the levels their bits;
    // where it did not, the last hot level's FPR, or Monkey's bits spread over every entry
    let below = if filter_bytes <= 0.0 {
        1.0
    } else if h >= 1 {
        tree.fpr[h]
    } else {
        let bits = 8.0 * filter_bytes / shape.effective_entries.max(1.0);
        (-bits * std::f64::consts::LN_2 * std::f64::consts::LN_2)
            .exp()
            .min(1.0)
    };
    for i in h + 1..=l {
        tree.hot_fpr[i] = tree.filter_fpr.get(i).copied().unwrap_or(below);
    }
}

/// How the runs a level holds spread over the time a lookup meets it: (runs, share of the time) pairs.
pub(super) type RunSpread = Vec<(f64, f64)>;

/// The trees a lookup meets over time, each with its weight (summing to 1), where the tree at its mean does
/// not price it: at the first level above the last whose runs, at the most it holds (`spreads`: over a tiered
/// level's fill cycle 0, 1, .., n − 1 runs alike; over the planner's simulation of the writes, the run counts
/// it had), no longer all keep their fences in what M_FP leaves them. A cold run costs a lookup that passes
/// it its index block and a data block, a resident one a filter's false positive, so the level's cost is convex
/// in how many runs it holds, and the mean over time lies above the price of its mean run count. A T = 32,
/// K = Z = 31 design on 60,000 keys at 4 MiB (held-out seed 37's YCSB-B pick) read 1.09-1.29 blocks a lookup
/// with 2-16 runs at level 2, 5.0 with 24 (16 resident) and 6.7 with 29, 2.78 over eight points of its cycle,
/// where the mean of 15 runs, every one resident, priced 1.12.
///
/// The run counts are taken in stretches over which the cost grows about linearly, each priced at its mean
/// (residency worked out there) and weighted by its share: those whose runs all fit, and those past the fit in
/// two halves (each cold run more is passed by fewer lookups: a key found in an earlier run stops there).
/// Empty where every count fits, for a workload that does not write (the load's tree does not cycle), and
/// under the reference quirks' residency.
pub(super) fn cycle_phases(
    tree: &Tree,
    under: Option<&crate::loaded::UnderWrites>,
    fence_bytes: f64,
    filter_bytes: f64,
    shape: &DataShape,
    quirks: &ReferenceQuirks,
    writes: bool,
) -> Vec<(f64, Tree)> {
    let l = tree.l as usize;
    if !writes || quirks.levels_hot_or_cold || quirks.cold_levels_hold_no_data {
        return Vec::new();
    }
    let at = |i: usize, runs: f64| {
        let mut t = tree.clone();
        t.runs[i] = runs;
        residency(&mut t, fence_bytes, filter_bytes, shape, quirks, writes);
        t
    };
    // the fences of the levels above, at their means (as `residency` walks them)
    let mut above = 0.0;
    for i in 1..l {
        let per_run = run_fences(tree, i, shape, writes);
        let overflows = most_runs(tree, under, i)
            .is_some_and(|most| per_run > 0.0 && above + most * per_run > fence_bytes);
        if let (true, Some(spread)) = (overflows, run_spread(tree, under, i)) {
            let whole = ((fence_bytes - above).max(0.0) / per_run).floor();
            return stretches(&spread, whole)
                .into_iter()
                .map(|(w, runs)| (w, at(i, runs)))
                .collect();
        }
        above += tree.runs[i] * per_run.max(0.0);
        if above > fence_bytes {
            break;
        }
    }
    Vec::new()
}

/// A level's run counts (`spread`, shares summing to 1 or less: the rest held none) in the stretches
/// [`cycle_phases`] prices, as (share, mean runs): the counts up to `whole` (every run fits), and those past it
/// in a lower and an upper half by share.
pub(super) fn stretches(spread: &[(f64, f64)], whole: f64) -> Vec<(f64, f64)> {
    let mut points: Vec<(f64, f64)> = spread.iter().copied().filter(|&(_, w)| w > 0.0).collect();
    let held: f64 = points.iter().map(|&(_, w)| w).sum();
    if held < 1.0 {
        points.push((0.0, 1.0 - held));
    }
    points.sort_by(|a, b| a.0.total_cmp(&b.0));
    let mean = |pts: &[(f64, f64)]| {
        let w: f64 = pts.iter().map(|&(_, w)| w).sum();
        (w > 0.0).then(|| (w, pts.iter().map(|&(r, w)| r * w).sum::<f64>() / w))
    };
    let cut = points.partition_point(|&(r, _)| r <= whole);
    let (fit, past) = points.split_at(cut);
    let past_share: f64 = past.iter().map(|&(_, w)| w).sum();
    // (a point goes to the lower half while the share before its middle is under half the stretch's)
    let mut before = 0.0;
    let half = past
        .iter()
        .take_while(|&&(_, w)| {
            let lower = before + w / 2.0 < past_share / 2.0;
            before += w;
            lower
        })
        .count();
    let (lower, upper) = past.split_at(half.max(1).min(past.len()));
    [mean(fit), mean(lower), mean(upper)]
        .into_iter()
        .flatten()
        .collect()
}

/// A tiered level's run counts over its fill cycle (a level above the last that gathers runs: 0, 1, ..,
/// n − 1 alike), or over the planner's simulation of the writes where it ran (`under`, its levels as the
/// model's), for [`cycle_phases`]; `None` for a level that does not gather runs (a leveled level, which holds
/// one run or none, is priced at its mean either way), the last, and levels the simulation did not have.
pub(super) fn run_spread(
    tree: &Tree,
    under: Option<&crate::loaded::UnderWrites>,
    i: usize,
) -> Option<RunSpread> {
    if i == 0 || i >= tree.l as usize || tree.limit(i) <= 1.0 {
        return None;
    }
    match under {
        Some(u) => u
            .run_counts
            .get(i - 1)
            .map(|c| c.iter().enumerate().map(|(r, &w)| (r as f64, w)).collect()),
        None => {
            let n = tree.cycle.get(i).copied().unwrap_or(0.0);
            (n >= 2.0).then(|| (0..n as usize).map(|r| (r as f64, 1.0 / n)).collect())
        }
    }
}

/// The most runs level `i` holds at any point of [`run_spread`]'s spread (without making it).
pub(super) fn most_runs(
    tree: &Tree,
    under: Option<&crate::loaded::UnderWrites>,
    i: usize,
) -> Option<f64> {
    if i == 0 || i >= tree.l as usize || tree.limit(i) <= 1.0 {
        return None;
    }
    match under {
        Some(u) => u
            .run_counts
            .get(i - 1)
            .and_then(|c| c.iter().rposition(|&w| w > 0.0))
            .map(|r| r as f64),
        None => {
            let n = tree.cycle.get(i).copied().unwrap_or(0.0);
            (n >= 2.0).then_some(n - 1.0)
        }
    }
}

/// Level by level above the last, the runs the planner's simulation had there while the workload's writes
/// ran ([`crate::loaded::UnderWrites::runs`]) in place of a fill cycle's mean, when the simulation's tree is
/// as deep as the model's: a level whose cycle outlasts the operations is met at one phase of it, and over
/// many cycles the planner's levels do not hold the closed form's mean either. The runs keep the closed form's
/// entries (the simulation's entries per run priced the fixed hybrid design's lookups further above the
/// engine's); which of them keep their fences is [`residency`]'s to work out again over these runs (the
/// simulation's own residency priced every stored report's LSM cells 9 points worse; taking every run of a
/// level fully resident at its mean resident at any count priced 21 runs resident where the engine kept 17).
///
/// Whether it did: not where the two trees differ in depth.
pub(super) fn phase_runs(tree: &mut Tree, runs: &[f64]) -> bool {
    let l = tree.l as usize;
    if runs.len() != l {
        return false;
    }
    tree.runs[1..l].copy_from_slice(&runs[..l - 1]);
    true
}

/// Which runs keep their fences in memory once [`phase_runs`] gave the levels above the last the runs the
/// simulation had: a level keeps resident no more runs than it holds, nor more than fit in what the levels
/// above it leave at the cycle's mean (`mean`, whose residency [`residency`] worked out). Taking every run of
/// a level that fits whole at its mean resident at any count priced 21 runs resident where the engine kept 17
/// (held-out seed 37's 4 MiB YCSB-B pick, T = 32, K = Z = 31). The levels below keep the mean's residency: the
/// simulation's phase moves with the files' sizes (a filter's bits make them larger), and letting it move the
/// levels below made a lookup's price rise with filter memory; the phases in which a level outgrows its
/// fences are [`cycle_phases`]'s.
pub(super) fn phased_residency(tree: &mut Tree, mean: &Tree, fence_bytes: f64, shape: &DataShape) {
    let l = tree.l as usize;
    let mut left = fence_bytes;
    for i in 1..l {
        let per_run = run_fences(mean, i, shape, true);
        let fit = if per_run > 0.0 {
            left.max(0.0) / per_run
        } else {
            f64::INFINITY
        };
        // (a level the mean keeps whole keeps what fits of its runs; one it keeps in part, that part)
        let kept = if mean.resident[i] >= mean.runs[i] {
            fit
        } else {
            mean.resident[i]
        };
        tree.resident[i] = kept.min(tree.runs[i]);
        left -= mean.resident[i] * per_run.max(0.0);
    }
}

//! Lookups under YCSB's "latest" (recency) distribution: the newest keys in the buffer and the top levels,
//! over the model's tree ([`latest_lookup`]) or the planner's simulated levels ([`latest_lookup_simulated`]).

use crate::dist::tree::Tree;
use crate::keys::harmonic;

/// σ_l under YCSB's "latest": the key of recency rank r (1 = newest insert) is read with probability
/// r^{−θ}/H(N, θ); the newest keys sit in the buffer, the next ones in level 1 (half its capacity on average),
/// and so on down to the last level. A key found in level i has cost every run above it a filter false
/// positive (or a block, without filters), about half the runs of its own level, and its own block.
pub(super) fn latest_lookup(tree: &Tree, theta: f64, entries: f64) -> f64 {
    let l = tree.l as usize;
    let total = harmonic(entries, theta);
    if total <= 0.0 || l == 0 {
        return 0.0;
    }
    // the runs newest first, in groups of like runs: a level's resident runs, then its cold ones
    // (runs, blocks of passing one, index blocks of reaching the key in one, entries per run, last group)
    let mut groups = Vec::new();
    for i in 1..=l {
        let hot = tree.resident[i].min(tree.runs[i]);
        let cold = tree.runs[i] - hot;
        if hot > 0.0 {
            groups.push((
                hot,
                tree.hot_fpr[i],
                0.0,
                tree.alpha_entries[i],
                i == l && cold <= 0.0,
            ));
        }
        if cold > 0.0 {
            let probe = tree.cold_probe(i);
            groups.push((
                cold,
                probe,
                tree.index_cost[i],
                tree.alpha_entries[i],
                i == l,
            ));
        }
    }
    let mut lo = tree.alpha_entries[0];
    let mut above = 0.0; // false-positive cost of every run above the current group
    let mut cost = 0.0;
    for (runs, probe, index, per_run, last) in groups {
        let hi = if last {
            entries
        } else {
            (lo + per_run * runs).min(entries)
        };
        let mass = (harmonic(hi, theta) - harmonic(lo, theta)) / total;
        if mass > 0.0 {
            let own = (runs - 1.0).max(0.0) / 2.0 * probe + 1.0 + index;
            cost += mass * (above + own);
        }
        above += runs * probe;
        lo = hi;
        if lo >= entries {
            break;
        }
    }
    cost
}

/// One level of the planner's simulation under the workload's writes ([`crate::loaded::UnderWrites`]), as a
/// latest lookup or a scan meets it: its runs and entries on average over the writes, what passing it costs,
/// and what seeking into it costs.
pub(super) struct SimLevel {
    /// Runs on average (a level empty part of its cycle holds less than one)
    pub(super) runs: f64,
    /// Entries on average
    pub(super) entries: f64,
    /// Blocks a lookup pays passing the level without its key: every run's probe where the level spans the
    /// key space, else one probe for the share of the time and the key space its files cover (its files'
    /// share averaged over the writes, 0 while it is empty)
    pub(super) pass: f64,
    /// Blocks of passing one run (a filter false positive, or a block without one, and the index block of a
    /// cold run)
    pub(super) probe: f64,
    /// Index blocks of reaching the key in a run of the level (cold runs)
    pub(super) index: f64,
    /// Blocks a scan's seeks read there: a seek (and the index block of a cold run) into every run it holds,
    /// whatever share of the key space its files cover (a scan of a count of keys needs each run's next key
    /// at or after its start, which lies in some file unless the start is past the run's last key), none
    /// while it is empty
    pub(super) seeks: f64,
}

/// The simulation's levels priced with the model's costs of passing and seeking into a level's runs: the
/// simulation's level j takes the model's level j's, its last level the model's last (the two trees can
/// differ in depth: the model's last level holds every key, the simulation's what the merges left there).
pub(super) fn sim_levels(
    tree: &Tree,
    u: &crate::loaded::UnderWrites,
    whole: impl Fn(usize, f64) -> bool,
) -> Vec<SimLevel> {
    let l = tree.l as usize;
    let depth = u.runs.len();
    (0..depth)
        .map(|j| {
            let i = if j + 1 == depth { l } else { (j + 1).min(l) };
            let runs = u.runs[j];
            let entries = u.entries.get(j).copied().unwrap_or(0.0);
            let per_run = |total: f64| {
                if tree.runs[i] > 0.0 {
                    total / tree.runs[i]
                } else {
                    total
                }
            };
            let probe = per_run(tree.pass_level(i));
            let seek = per_run(tree.seeks(i));
            let cold = 1.0 - (tree.resident[i] / tree.runs[i].max(1e-12)).min(1.0);
            let covered = u.covered.get(j).copied().unwrap_or(0.0).clamp(0.0, 1.0);
            let pass = if whole(j + 1, runs) {
                runs * probe
            } else {
                covered * probe
            };
            SimLevel {
                runs,
                entries,
                pass,
                probe,
                index: tree.index_cost[i] * cold,
                seeks: runs * seek,
            }
        })
        .collect()
}

/// σ_l under YCSB's "latest" over the planner's simulation of the writes ([`sim_levels`]): the newest keys in
/// the buffer, then level by level the entries each holds on average; a key found in a level has cost the
/// levels above what passing them costs (a level that does not span the key space only where its files cover
/// the key, and not while it is empty), about half the runs of its own level, its own block. A development
/// design (T = 2, K = Z = 1, partial, no filters, YCSB-D at 60,000 keys: a binary counter of one-file levels
/// above partial ones) was priced 2.74 blocks a lookup over the model's nominal tree, where the engine read
/// 1.70; 1.86 over the simulation's levels.
pub(super) fn latest_lookup_simulated(
    levels: &[SimLevel],
    buffer: f64,
    theta: f64,
    entries: f64,
) -> f64 {
    let total = harmonic(entries, theta);
    if total <= 0.0 || levels.is_empty() {
        return 0.0;
    }
    let (mut lo, mut above, mut cost) = (buffer, 0.0, 0.0);
    for (j, level) in levels.iter().enumerate() {
        let hi = if j + 1 == levels.len() {
            entries
        } else {
            (lo + level.entries).min(entries)
        };
        let mass = (harmonic(hi, theta) - harmonic(lo, theta)) / total;
        if mass > 0.0 {
            let own = (level.runs - 1.0).max(0.0) / 2.0 * level.probe + 1.0 + level.index;
            cost += mass * (above + own);
        }
        above += level.pass;
        lo = hi;
        if lo >= entries {
            break;
        }
    }
    cost
}

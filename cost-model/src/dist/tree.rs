//! The tree the model prices: per level (0 the buffer, 1..=L on disk) its runs, the entries a run holds, the
//! writes whose keys decide α, the filters' false-positive rates and which runs keep their fences in memory;
//! and what passing, probing and seeking into a level's runs costs a lookup or a scan.

use crate::probes::Probes;
use std::borrow::Cow;

/// ln(x) with the convention that factors of zero stay zero: c·ln(ā) is 0 when c = 0 even if ā = 0.
#[inline]
pub(super) fn scaled(c: f64, ln_abar: f64) -> f64 {
    if c == 0.0 {
        0.0
    } else {
        c * ln_abar
    }
}

/// Per-level structure of the tree, index 0 = buffer, 1..=L disk levels.
#[derive(Clone)]
pub(super) struct Tree {
    pub(super) t: f64,
    pub(super) k: f64,
    pub(super) z: f64,
    pub(super) eb: f64,
    pub(super) b: f64,
    pub(super) l: u32,
    pub(super) y: u32,
    /// Levels 1..=k_levels hold K runs, the deeper ones Z: every level above the last when Y = 0; with
    /// Y ≥ 1 the hot levels, as the engine's planner runs them (Table 2's L − Y − 1 with
    /// `last_hot_level_holds_z`)
    pub(super) k_levels: u32,
    /// runs per level
    pub(super) runs: Vec<f64>,
    /// entries per run (0 for internal cold levels)
    pub(super) run_entries: Vec<f64>,
    /// entries per run that decide α (what a lookup finds there): the steady state's average fill
    pub(super) alpha_entries: Vec<f64>,
    /// writes whose keys a run holds, which decide α (a key is in the run if one of them wrote it): the run's
    /// entries, except in a leveled level that its distinct keys cannot fill, which holds every key written
    pub(super) alpha_writes: Vec<f64>,
    /// extra I/Os of probing a run of the level: 1 where its fences are on disk (fixed model), else 0
    pub(super) index_cost: Vec<f64>,
    /// FPR per level (1 where there is no filter)
    pub(super) fpr: Vec<f64>,
    /// Runs per level whose fences (and filters) are in memory, newest first: all of a hot level's, none of a
    /// cold level's, and at the first cold level those M_FP still holds (a fraction counts a run's share)
    pub(super) resident: Vec<f64>,
    /// The FPR of a resident run (its filter's; 1 without filters)
    pub(super) hot_fpr: Vec<f64>,
    /// Per level, the FPR of the filter the engine writes for a run there, whether the level is hot or
    /// cold (Monkey's bits for the level within M_BF, as [`refilter`](super::shape::refilter) gives them); empty when the fixed model's
    /// filters were not worked out (the reference quirks), which then price as before
    pub(super) filter_fpr: Vec<f64>,
    /// R
    pub(super) fpr_sum: f64,
    /// Entries and writes of one run arriving at the last level (a flush, or one push from above), as
    /// [`cycle_runs`](super::flow::cycle_runs) and [`run_writes`](super::flow::run_writes) walk the levels (0 until they do)
    pub(super) arrival: (f64, f64),
    /// The entries the flushes behind one arrival at the last level held, before the merges on the way kept
    /// one version of a key: what an arrival takes of the entries that have flowed down the tree, which count
    /// the arrivals (`flowed` in [`cycle_runs`](super::flow::cycle_runs) and [`group_last_level`](super::flow::group_last_level); 0 until [`cycle_runs`](super::flow::cycle_runs) walks)
    pub(super) arrival_flushed: f64,
    /// Per level, the entries of the runs a compaction merges into one run there, before the merge keeps one
    /// version of a key: what the engine sizes a tiered level's filters by (`writer_options`); 0 where
    /// [`cycle_runs`](super::flow::cycle_runs) did not set it (the run's own entries then)
    pub(super) input_entries: Vec<f64>,
    /// Per level above the last, the runs at which a tiered level is pushed down ([`cycle_runs`](super::flow::cycle_runs)): over its
    /// fill cycle it holds 0, 1, .., n − 1 runs alike; 0 where the level does not cycle so (a leveled level,
    /// or before [`cycle_runs`](super::flow::cycle_runs) walks)
    pub(super) cycle: Vec<f64>,
    /// Entries of the run that made a tiered last level below level 1: level l − 1 pushed down whole at θ of
    /// its capacity ([`cycle_runs`](super::flow::cycle_runs); 0 otherwise)
    pub(super) last_base: f64,
    /// The groups of unlike runs a tiered last level holds, newest first ([`group_last_level`](super::flow::group_last_level)); `None` when
    /// its runs are alike
    pub(super) last_groups: Option<Vec<RunGroupShape>>,
    /// Per level, ln of the chance a key is in none of the level's runs for a reason other than the writes
    /// its runs gathered (the load's keys a group of the last level holds); empty (every level 0) but in
    /// [`Tree::for_lookups`], so pricing a tree without groups allocates nothing for it.
    /// It counts for the partitions whose α counts writes (`AlphaForm::Exact`, skewed keys over the stored
    /// ones); a linear partition's α counts a run's entries among its universe, which already says it
    pub(super) share_ln: Vec<f64>,
}

/// One group of like runs of a level: how many, the entries and the writes each holds, and the share of all
/// keys each holds whatever the writes did (the load's keys it kept).
#[derive(Clone, Copy, Debug, PartialEq)]
pub(super) struct RunGroupShape {
    pub(super) runs: f64,
    pub(super) entries: f64,
    pub(super) writes: f64,
    pub(super) share: f64,
    /// Runs of the group whose fences are in memory ([`residency`](super::residency::residency))
    pub(super) resident: f64,
}

impl Tree {
    /// h = L − Y: index of the last hot level (0 when every level is cold).
    pub(super) fn last_hot(&self) -> u32 {
        self.l - self.y
    }

    /// The runs a lookup consults on the disk levels, level 1's first ([`Probes::of_runs`]).
    pub(super) fn probes(&self) -> Probes {
        Probes::of_runs((1..=self.l as usize).map(|i| {
            (
                self.runs.get(i).copied().unwrap_or(0.0),
                self.alpha_entries.get(i).copied().unwrap_or(0.0),
            )
        }))
    }

    /// The runs level `i` may hold: K on the levels above the last that hold K, Z below.
    pub(super) fn limit(&self, i: usize) -> f64 {
        if i <= self.k_levels as usize {
            self.k
        } else {
            self.z
        }
    }

    /// The cold share of run `r` (1-based, newest first) of level `i` (none when every run the level holds is
    /// resident, a level holding less than one run on average among them).
    pub(super) fn cold(&self, i: usize, r: f64) -> f64 {
        if self.resident[i] >= self.runs[i] {
            return 0.0;
        }
        (r - self.resident[i]).clamp(0.0, 1.0)
    }

    /// Blocks a lookup reads passing run `r` of level `i` without its key: a filter false positive when the
    /// run is resident, else its data block (no filter in memory) and its on-disk index block.
    pub(super) fn pass(&self, i: usize, r: f64) -> f64 {
        let cold = self.cold(i, r);
        (1.0 - cold) * self.hot_fpr[i] + cold * self.cold_probe(i)
    }

    /// Blocks of passing every run of level `i`.
    pub(super) fn pass_level(&self, i: usize) -> f64 {
        let hot = self.resident[i].min(self.runs[i]);
        hot * self.hot_fpr[i] + (self.runs[i] - hot) * self.cold_probe(i)
    }

    /// Blocks of passing one cold run of level `i`: the engine keeps a run's filter in memory only while its
    /// fences are (`set_residency`), so a cold run's probe reads its index block and a data block, a hot
    /// level's cold runs too. Where [`refilter`](super::shape::refilter) did not run (the reference quirks' filters) the level's FPR
    /// stands in, as the reference prices it (1 below the hot levels).
    pub(super) fn cold_probe(&self, i: usize) -> f64 {
        let fpr = if self.filter_fpr.is_empty() {
            self.fpr[i]
        } else {
            1.0
        };
        fpr + self.index_cost[i]
    }

    /// Blocks of seeking into every run of level `i` (a scan): the data block, and the index block of a cold
    /// run.
    pub(super) fn seeks(&self, i: usize) -> f64 {
        let hot = self.resident[i].min(self.runs[i]);
        hot + (self.runs[i] - hot) * (1.0 + self.index_cost[i])
    }

    /// The tree as a lookup meets it: a last level of groups of unlike runs ([`group_last_level`](super::flow::group_last_level)) becomes as
    /// many levels of like runs, newest first, so the lookup's per-level sums price each group with its own
    /// chance of holding the key. A tree without groups is itself. `spans` (per level) grows alike.
    pub(super) fn for_lookups<'a>(&'a self, spans: &'a [f64]) -> (Cow<'a, Tree>, Cow<'a, [f64]>) {
        let Some(groups) = self.last_groups.as_deref() else {
            return (Cow::Borrowed(self), Cow::Borrowed(spans));
        };
        let l = self.l as usize;
        let extra = groups.len().saturating_sub(1);
        let mut t = self.clone();
        let split = |v: &mut Vec<f64>, of: &dyn Fn(&RunGroupShape) -> f64| {
            v.truncate(l);
            v.extend(groups.iter().map(of));
        };
        let same = |v: &mut Vec<f64>| {
            let x = v[l];
            v.truncate(l + 1);
            v.extend(std::iter::repeat_n(x, extra));
        };
        split(&mut t.runs, &|g| g.runs);
        split(&mut t.run_entries, &|g| g.entries);
        split(&mut t.alpha_entries, &|g| g.entries);
        split(&mut t.alpha_writes, &|g| g.writes);
        split(&mut t.resident, &|g| g.resident);
        t.share_ln = vec![0.0; l];
        t.share_ln
            .extend(groups.iter().map(|g| (-g.share.clamp(0.0, 1.0)).ln_1p()));
        same(&mut t.index_cost);
        same(&mut t.fpr);
        same(&mut t.hot_fpr);
        if !t.filter_fpr.is_empty() {
            same(&mut t.filter_fpr);
        }
        // every group is hot when the level was, else every one cold
        if self.last_hot() < self.l {
            t.y += extra as u32;
        }
        t.l += extra as u32;
        t.last_groups = None;
        let mut spans = spans.to_vec();
        spans.truncate(l + 1);
        spans.extend(std::iter::repeat_n(spans[l], extra));
        (Cow::Owned(t), Cow::Owned(spans))
    }
}

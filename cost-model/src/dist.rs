//! Cosine's distribution-aware I/O model (paper Table 2 and Eq. 1; MODEL.md §2).
//!
//! The exact definitions follow the authors' code, with these fixes (each switchable back through
//! [`ReferenceQuirks`]):
//! * **float exponents** in R: K^{1/T} and T^{T/(T−1)} (`integer_exponents`);
//! * **exact Monkey allocation** over the hot runs, so every FPR is at most 1 and the low-memory regime (largest
//!   hot levels unfiltered) falls out of the optimum (`closed_form_fpr`, `unclamped_fpr`);
//! * **fences first with the geometric fence sum**: Y comes from the design's M_FP (`fence_sum_bug`);
//! * **the last level is counted once** in σ_s (`scan_double_count`);
//! * **a long scan seeks once into every run it reads** (the short-scan cost K(L−Y−1) + Z(Y+1)) before its
//!   sequential blocks, MODEL.md §9.6 (`scan_without_seeks`);
//! * no empirical **B-tree ×0.1 read discount** (`btree_discount`);
//! * `entries` is the data set's size: **skew does not shrink N_eff** (`skew_shrinks_entries`);
//! * **LSH lookups conditioned on existence**, mixed over all key partitions (`lsh_unconditioned`).
//!
//! and these, which make the model describe the engine it scores (found with `cosine validate`):
//! * a **steady-state buffer and levels**: half full on average, the buffer empty without writes; read-only
//!   lookups after a uniform load probe the levels compaction merges whole and the level holding the key
//!   (`full_buffer`);
//! * **cold levels hold data** and a cold run's probe reads its index block (`cold_levels_hold_no_data`);
//! * **long scans per run**: one seek (plus the index when cold) and the run's share of s/B (`scan_full_levels`);
//! * **LSH as our hash-indexed runs**: one block per lookup, none per miss, 1/B per write, a scan seeks every run;
//!   the hybrid log's memory as our engine holds it, the mutable region (the write buffer, half full on
//!   average) and the read-only region of the newest flushed records in the rest of M_B, where the authors'
//!   code takes a full tail of 0.9 and 0.1 of it (`lsh_calibrated`);
//! * **"latest" as recency**: the newest inserts are in the buffer and the top levels (`latest_as_zipfian`);
//! * **a fence is its key plus 21 bytes** (block handle, offset, and the byte that makes it the smallest key
//!   above the previous block; `fence_is_key_only`);
//! * **out-of-place updates** without filters too (`in_place_unfiltered_updates`);
//! * a single-run level that **partial compaction** feeds file by file is probed only for the keys it holds
//!   (`partial_levels_span_keys`);
//! * a level is pushed down once it holds the design's **merge threshold** θ of its capacity, so the tree is as
//!   deep as one of θ-sized levels and a level above the last holds θ/2 of its capacity on average
//!   (`merge_threshold_ignored`).
//!
//! Evaluation is O(L·max(K,Z)) per key partition: probabilities of "not in run" are multiplied as prefix and
//! suffix sums of logarithms (stable when α is tiny or exactly 1).

use crate::bloom::{self, RunGroup};
use crate::keys::{
    coupon_collector, distinct_after, exp_or_zero, harmonic, writes_to_fill, AlphaForm, KeyPart,
    KeySpace,
};
use crate::layout::{self, DataShape};
use crate::quirks::ReferenceQuirks;
use crate::{weigh, IoCost, IoModel, ModelError, PerOp};
use cosine_design::{
    Compaction, Design, DesignClass, FilePicking, KeyDistribution, LogKind, RunStrategy, Workload,
};
use std::borrow::Cow;

/// Empirical constants of the authors' code, kept as named calibration constants (MODEL.md §9.5).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Calibration {
    /// LSH append-only log: lookup scale-up (1.8).
    pub lsh_lookup_scale: f64,
    /// LSH append-only log: insert scale-up (1.5).
    pub lsh_insert_scale: f64,
    /// B-tree lookup discount for cached internal nodes (0.1), applied only with the `btree_discount` quirk.
    pub btree_read_discount: f64,
}

impl Default for Calibration {
    fn default() -> Self {
        Calibration {
            lsh_lookup_scale: 1.8,
            lsh_insert_scale: 1.5,
            btree_read_discount: 0.1,
        }
    }
}

/// The distribution-aware I/O model.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct DistributionAware {
    /// Which reference-code quirks to reproduce (none by default).
    pub quirks: ReferenceQuirks,
    /// Empirical constants.
    pub calibration: Calibration,
    /// The engine that runs an LSH design (fixed model): ours, or FASTER for the search's FASTER baseline.
    pub lsh_engine: LshEngine,
}

/// The engine that runs an LSH-class design, where the two differ in what the model prices: how a lookup reads
/// a record on disk, what the log keeps in memory, and how a scan and a write are served.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum LshEngine {
    /// Our engine: a lookup reads the block its hash index points to; the write buffer (the hybrid log's
    /// mutable region) holds the workload's writes and the read-only region the newest flushed records; a scan
    /// seeks every run; writes are flushed and merged.
    #[default]
    Cosine,
    /// FASTER (Microsoft's hybrid log): a lookup that leaves memory reads the record's header first
    /// (`MinIoRequestSize`, one sector), then the rest of the record when it runs past that sector
    /// (`AsyncGetFromDiskCallback` in faster.h; a YCSB-C run under strace: 25,511 reads of 512 B and 25,511 of
    /// 1,536 B for 1 KB records); its in-memory log pages are always full of the newest records, the load's
    /// until writes replace them; its hash index is in memory, so a miss reads nothing; it has no ordered
    /// scan, so a scan of s keys is s lookups (the authors' pricing too); a write is appended to the log.
    Faster,
}

/// Bytes of a disk sector, FASTER's unit of reading its log.
pub const FASTER_SECTOR_BYTES: f64 = 512.0;
/// Bytes of a FASTER record's header (its `RecordInfo`).
pub const FASTER_RECORD_HEADER_BYTES: f64 = 8.0;

impl LshEngine {
    /// Device reads a lookup makes for a record on disk of `entry_bytes` (key and value): 1 for our engine;
    /// for FASTER the header's sector, and a second read with the chance that the record, starting anywhere in
    /// that sector, runs past it.
    pub fn record_reads(self, entry_bytes: f64) -> f64 {
        match self {
            LshEngine::Cosine => 1.0,
            LshEngine::Faster => {
                1.0 + ((entry_bytes + FASTER_RECORD_HEADER_BYTES) / FASTER_SECTOR_BYTES).min(1.0)
            }
        }
    }
}

impl DistributionAware {
    /// The fixed model.
    pub fn new() -> Self {
        Self::default()
    }

    /// The model with the reference code's arithmetic.
    pub fn reference() -> Self {
        DistributionAware {
            quirks: ReferenceQuirks::ALL,
            ..Self::default()
        }
    }
}

/// ln(x) with the convention that factors of zero stay zero: c·ln(ā) is 0 when c = 0 even if ā = 0.
#[inline]
fn scaled(c: f64, ln_abar: f64) -> f64 {
    if c == 0.0 {
        0.0
    } else {
        c * ln_abar
    }
}

/// Per-level structure of the tree, index 0 = buffer, 1..=L disk levels.
#[derive(Clone)]
struct Tree {
    t: f64,
    k: f64,
    z: f64,
    eb: f64,
    b: f64,
    l: u32,
    y: u32,
    /// Levels 1..=k_levels hold K runs, the deeper ones Z: every level above the last when Y = 0; with
    /// Y ≥ 1 the hot levels, as the engine's planner runs them (Table 2's L − Y − 1 with
    /// `last_hot_level_holds_z`)
    k_levels: u32,
    /// runs per level
    runs: Vec<f64>,
    /// entries per run (0 for internal cold levels)
    run_entries: Vec<f64>,
    /// entries per run that decide α (what a lookup finds there): the steady state's average fill
    alpha_entries: Vec<f64>,
    /// writes whose keys a run holds, which decide α (a key is in the run if one of them wrote it): the run's
    /// entries, except in a leveled level that its distinct keys cannot fill, which holds every key written
    alpha_writes: Vec<f64>,
    /// extra I/Os of probing a run of the level: 1 where its fences are on disk (fixed model), else 0
    index_cost: Vec<f64>,
    /// FPR per level (1 where there is no filter)
    fpr: Vec<f64>,
    /// Runs per level whose fences (and filters) are in memory, newest first: all of a hot level's, none of a
    /// cold level's, and at the first cold level those M_FP still holds (a fraction counts a run's share)
    resident: Vec<f64>,
    /// The FPR of a resident run (its filter's; 1 without filters)
    hot_fpr: Vec<f64>,
    /// Per level, the FPR of the filter the engine writes for a run there, whether the level is hot or
    /// cold (Monkey's bits for the level within M_BF, as [`refilter`] gives them); empty when the fixed model's
    /// filters were not worked out (the reference quirks), which then price as before
    filter_fpr: Vec<f64>,
    /// R
    fpr_sum: f64,
    /// Entries and writes of one run arriving at the last level (a flush, or one push from above), as
    /// [`cycle_runs`] and [`run_writes`] walk the levels (0 until they do)
    arrival: (f64, f64),
    /// The entries the flushes behind one arrival at the last level held, before the merges on the way kept
    /// one version of a key: what an arrival takes of the entries that have flowed down the tree, which count
    /// the arrivals (`flowed` in [`cycle_runs`] and [`group_last_level`]; 0 until [`cycle_runs`] walks)
    arrival_flushed: f64,
    /// Per level, the entries of the runs a compaction merges into one run there, before the merge keeps one
    /// version of a key: what the engine sizes a tiered level's filters by (`writer_options`); 0 where
    /// [`cycle_runs`] did not set it (the run's own entries then)
    input_entries: Vec<f64>,
    /// Per level above the last, the runs at which a tiered level is pushed down ([`cycle_runs`]): over its
    /// fill cycle it holds 0, 1, .., n − 1 runs alike; 0 where the level does not cycle so (a leveled level,
    /// or before [`cycle_runs`] walks)
    cycle: Vec<f64>,
    /// Entries of the run that made a tiered last level below level 1: level l − 1 pushed down whole at θ of
    /// its capacity ([`cycle_runs`]; 0 otherwise)
    last_base: f64,
    /// The groups of unlike runs a tiered last level holds, newest first ([`group_last_level`]); `None` when
    /// its runs are alike
    last_groups: Option<Vec<RunGroupShape>>,
    /// Per level, ln of the chance a key is in none of the level's runs for a reason other than the writes
    /// its runs gathered (the load's keys a group of the last level holds); empty (every level 0) but in
    /// [`Tree::for_lookups`], so pricing a tree without groups allocates nothing for it.
    /// It counts for the partitions whose α counts writes (`AlphaForm::Exact`, skewed keys over the stored
    /// ones); a linear partition's α counts a run's entries among its universe, which already says it
    share_ln: Vec<f64>,
}

/// One group of like runs of a level: how many, the entries and the writes each holds, and the share of all
/// keys each holds whatever the writes did (the load's keys it kept).
#[derive(Clone, Copy, Debug, PartialEq)]
struct RunGroupShape {
    runs: f64,
    entries: f64,
    writes: f64,
    share: f64,
    /// Runs of the group whose fences are in memory ([`residency`])
    resident: f64,
}

impl Tree {
    /// h = L − Y: index of the last hot level (0 when every level is cold).
    fn last_hot(&self) -> u32 {
        self.l - self.y
    }

    /// The runs level `i` may hold: K on the levels above the last that hold K, Z below.
    fn limit(&self, i: usize) -> f64 {
        if i <= self.k_levels as usize {
            self.k
        } else {
            self.z
        }
    }

    /// The cold share of run `r` (1-based, newest first) of level `i` (none when every run the level holds is
    /// resident, a level holding less than one run on average among them).
    fn cold(&self, i: usize, r: f64) -> f64 {
        if self.resident[i] >= self.runs[i] {
            return 0.0;
        }
        (r - self.resident[i]).clamp(0.0, 1.0)
    }

    /// Blocks a lookup reads passing run `r` of level `i` without its key: a filter false positive when the
    /// run is resident, else its data block (no filter in memory) and its on-disk index block.
    fn pass(&self, i: usize, r: f64) -> f64 {
        let cold = self.cold(i, r);
        (1.0 - cold) * self.hot_fpr[i] + cold * self.cold_probe(i)
    }

    /// Blocks of passing every run of level `i`.
    fn pass_level(&self, i: usize) -> f64 {
        let hot = self.resident[i].min(self.runs[i]);
        hot * self.hot_fpr[i] + (self.runs[i] - hot) * self.cold_probe(i)
    }

    /// Blocks of passing one cold run of level `i`: the engine keeps a run's filter in memory only while its
    /// fences are (`set_residency`), so a cold run's probe reads its index block and a data block, a hot
    /// level's cold runs too. Where [`refilter`] did not run (the reference quirks' filters) the level's FPR
    /// stands in, as the reference prices it (1 below the hot levels).
    fn cold_probe(&self, i: usize) -> f64 {
        let fpr = if self.filter_fpr.is_empty() {
            self.fpr[i]
        } else {
            1.0
        };
        fpr + self.index_cost[i]
    }

    /// Blocks of seeking into every run of level `i` (a scan): the data block, and the index block of a cold
    /// run.
    fn seeks(&self, i: usize) -> f64 {
        let hot = self.resident[i].min(self.runs[i]);
        hot + (self.runs[i] - hot) * (1.0 + self.index_cost[i])
    }

    /// The tree as a lookup meets it: a last level of groups of unlike runs ([`group_last_level`]) becomes as
    /// many levels of like runs, newest first, so the lookup's per-level sums price each group with its own
    /// chance of holding the key. A tree without groups is itself. `spans` (per level) grows alike.
    fn for_lookups<'a>(&'a self, spans: &'a [f64]) -> (Cow<'a, Tree>, Cow<'a, [f64]>) {
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

/// Fence bytes of one run of level `i`, as [`residency`] counts them: what a run holds is the steady state's
/// average under writes; after a load and no writes, its level's share of the keys (as the read-only lookups
/// price them).
fn run_fences(tree: &Tree, i: usize, shape: &DataShape, writes: bool) -> f64 {
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
fn residency(
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
type RunSpread = Vec<(f64, f64)>;

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
fn cycle_phases(
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
fn stretches(spread: &[(f64, f64)], whole: f64) -> Vec<(f64, f64)> {
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
fn run_spread(
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
fn most_runs(tree: &Tree, under: Option<&crate::loaded::UnderWrites>, i: usize) -> Option<f64> {
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

/// R as the reference code computes it (closed form with T^Y in the exponent).
fn closed_form_r(
    filter_bytes: f64,
    n: f64,
    t: f64,
    k: f64,
    z: f64,
    y: u32,
    q: &ReferenceQuirks,
) -> f64 {
    let ln2 = q.ln2();
    let (k_exp, t_exp) = if q.integer_exponents {
        (0.0, ((t as i64) / ((t as i64) - 1)) as f64)
    } else {
        (1.0 / t, t / (t - 1.0))
    };
    exp_or_zero(-(8.0 * filter_bytes / n) * ln2 * ln2 * t.powi(y as i32))
        * z.powf((t - 1.0) / t)
        * k.powf(k_exp)
        * t.powf(t_exp)
        / (t - 1.0)
}

fn build_tree(
    design: &Design,
    shape: &DataShape,
    quirks: &ReferenceQuirks,
    class_hint_btree: bool,
) -> (Tree, f64, f64) {
    let t = design.size_ratio as f64;
    let k = design.hot_runs as f64;
    let z = design.cold_runs as f64;
    let flush = quirks.flush_bytes(design);
    let eb = flush / shape.entry_bytes;
    // a level is pushed down once it holds θ of its capacity: the tree is as deep as one of θ-sized levels
    // (the fixed model's base is the engine's own, `Design::level_base_bytes`)
    let base = if quirks.merge_threshold_ignored {
        flush
    } else if quirks.whole_buffer_flushes {
        flush * design.merge_threshold.clamp(0.01, 1.0)
    } else {
        design.level_base_bytes()
    };
    let l = layout::level_count(shape.effective_entries, shape.entry_bytes, base, t);
    let (mut y, fence_bytes, filter_bytes) = if quirks.fence_sum_bug {
        let split = layout::memory_split(
            (design.filter_bytes + design.fence_bytes) as f64,
            flush,
            t,
            k,
            z,
            l,
            shape,
            quirks,
        );
        (split.cold_levels, split.fence_bytes, split.filter_bytes)
    } else {
        let y = layout::cold_levels_for_fences(design.fence_bytes as f64, l, t, shape);
        (y, design.fence_bytes as f64, design.filter_bytes as f64)
    };
    let filter_bytes = if design.filter_bytes == 0 {
        0.0
    } else {
        filter_bytes
    };
    if quirks.btree_discount && class_hint_btree {
        y = l;
    }
    let h = l - y;
    let k_levels = if y == 0 || quirks.last_hot_level_holds_z {
        h.saturating_sub(1)
    } else {
        h
    };
    let mut runs = vec![1.0; l as usize + 1];
    let mut run_entries = vec![eb; l as usize + 1];
    for i in 1..=l {
        let hot = i <= k_levels; // levels 1..=k_levels hold K runs
        runs[i as usize] = if hot { k } else { z };
        run_entries[i as usize] = if hot {
            eb * t.powi(i as i32) / k
        } else if i < l && quirks.cold_levels_hold_no_data {
            0.0 // internal cold level (B-tree internal nodes) or the data-less last hot level, as the code models it
        } else {
            eb * t.powi(i as i32) / z
        };
    }
    // a cold run's probe reads its on-disk index block first (fixed model: any run can be cold, a hot level's
    // too when the runs it holds outgrow M_FP)
    let index_cost: Vec<f64> = (0..=l)
        .map(|i| {
            let can_be_cold = i > h || !quirks.levels_hot_or_cold;
            if i >= 1 && can_be_cold && !quirks.cold_levels_hold_no_data {
                1.0
            } else {
                0.0
            }
        })
        .collect();
    let alpha_entries = run_entries.clone();
    let mut fpr = vec![1.0; l as usize + 1];
    let fpr_sum;
    if h == 0 || filter_bytes <= 0.0 {
        // no filters: every hot run is probed
        fpr_sum = if h > 0 { k * (h as f64 - 1.0) + z } else { 0.0 };
    } else if quirks.closed_form_fpr {
        let r = closed_form_r(filter_bytes, shape.entries, t, k, z, y, quirks);
        for i in 1..=h {
            let p = if i < h {
                r * (t - 1.0) / (t * k * t.powi((h - i) as i32))
            } else {
                r * (t - 1.0) / (t * z)
            };
            fpr[i as usize] = if quirks.unclamped_fpr { p } else { p.min(1.0) };
        }
        fpr_sum = if quirks.unclamped_fpr {
            r
        } else {
            (1..=h).map(|i| runs[i as usize] * fpr[i as usize]).sum()
        };
    } else {
        let groups: Vec<RunGroup> = (1..=h)
            .map(|i| {
                let runs_i = if i <= k_levels { k } else { z };
                let data = shape.effective_entries * layout::data_share(i, l, t);
                RunGroup {
                    entries: data / runs_i,
                    runs: runs_i,
                }
            })
            .collect();
        let p = bloom::monkey_allocate(&groups, 8.0 * filter_bytes);
        for i in 1..=h {
            fpr[i as usize] = p[i as usize - 1];
        }
        fpr_sum = bloom::fpr_sum(&groups, &p);
    }
    (
        Tree {
            t,
            k,
            z,
            eb,
            b: shape.entries_per_block,
            l,
            y,
            k_levels,
            runs,
            run_entries,
            alpha_writes: alpha_entries.clone(),
            alpha_entries,
            index_cost,
            resident: Vec::new(),
            hot_fpr: Vec::new(),
            filter_fpr: Vec::new(),
            fpr,
            fpr_sum,
            arrival: (0.0, 0.0),
            arrival_flushed: 0.0,
            input_entries: Vec::new(),
            cycle: Vec::new(),
            last_base: 0.0,
            last_groups: None,
            share_ln: Vec::new(),
        },
        filter_bytes,
        fence_bytes,
    )
}

/// Writes the store has seen at the workload's end: χ₀ + χ operations (those run before and the workload's
/// own) times the write share.
fn written(w: &Workload) -> f64 {
    w.operations_before.saturating_add(w.operations) as f64 * write_share(w)
}

/// Writes the store had seen before the workload's own operations began: χ₀ times the write share.
fn written_before(w: &Workload) -> f64 {
    w.operations_before as f64 * write_share(w)
}

fn write_share(w: &Workload) -> f64 {
    w.mix.insert + w.mix.blind_update + w.mix.rmw
}

/// Per key partition, the chance that a lookup of an existing key is answered by the design's entry cache
/// (M_BC; all 0 without one): entries of the workload's size plus the cache's per-entry overhead, kept by the
/// lookups, emptied of a key by its blind updates and read-modify-writes (whose reads do not fill it).
fn cache_hits<'a>(
    design: &Design,
    workload: &Workload,
    parts: &[KeyPart],
) -> std::borrow::Cow<'a, [f64]> {
    // (no cache: zeros, without an allocation per design priced)
    const NONE: [f64; 64] = [0.0; 64];
    if design.cache_bytes == 0 {
        return match NONE.get(..parts.len()) {
            Some(zeros) => std::borrow::Cow::Borrowed(zeros),
            None => std::borrow::Cow::Owned(vec![0.0; parts.len()]),
        };
    }
    let entries = design.cache_bytes as f64
        / (workload.entry_bytes() + cosine_design::CACHE_ENTRY_OVERHEAD_BYTES) as f64;
    let m = &workload.mix;
    // a uniform key space's universe may be far larger than the stored keys (100 × N by default, for the
    // inserts' sake); lookups of existing keys draw from the N stored ones, and so does the cache
    let clamped;
    let parts = if let [one] = parts {
        let u = one.universe.min(workload.entries.max(1) as f64);
        clamped = [KeyPart::new(u, one.put, one.get, one.alpha)];
        &clamped[..]
    } else {
        parts
    };
    std::borrow::Cow::Owned(crate::keys::cache_hit_chances(
        parts,
        entries,
        m.lookup,
        m.blind_update + m.rmw,
    ))
}

/// The FPR per hot level and R as our engine's filters give them: each file's filter has its level's Monkey
/// bits over a nominal tree of every entry the levels hold (`bits_per_key_per_level`, the engine's own rule:
/// versions and the runs a tiered level gathers included, cold levels given their share too), and the filters
/// the hot runs hold stay within M_BF: a flush keeps level 1's bits, compaction outputs below get fewer when
/// the levels hold more than their nominal share.
fn refilter(tree: &mut Tree, filter_bytes: f64, slots: bool) {
    let (l, h) = (tree.l as usize, tree.last_hot() as usize);
    if h == 0 || filter_bytes <= 0.0 {
        return;
    }
    let held: Vec<f64> = (0..=l)
        .map(|i| tree.runs[i].max(0.0) * tree.alpha_entries[i].max(0.0))
        .collect();
    let entries: f64 = held[1..].iter().sum();
    let bits = cosine_design::shape::bits_per_key_per_level(
        filter_bytes as u64,
        entries,
        tree.l,
        tree.t,
        tree.k,
        tree.z,
    );
    if bits.len() < h {
        return;
    }
    let budget = 8.0 * filter_bytes;
    let first = held[1] * bits[0];
    let deeper: f64 = (2..=h).map(|i| held[i] * bits[i - 1]).sum();
    let scale = if first + deeper > budget && deeper > 0.0 {
        (budget - first).max(0.0) / deeper
    } else {
        1.0
    };
    // (every level's: a cold level's resident runs keep the filter their level's bits gave them)
    let mut b: Vec<f64> = (0..=l)
        .map(|i| match i {
            0 => 0.0,
            1 => bits[0],
            _ => bits.get(i - 1).map_or(0.0, |b| b * scale),
        })
        .collect();
    // A tiered level below level 1 is written by compactions, and the engine gives each output's filter an
    // even share of what the other levels' filters leave (those above at least as Monkey plans them) over
    // the runs the level may still gather, its run limit (`writer_options`), so that its last runs keep a
    // filter too: each run gets about the budget over K runs, however few the level holds on average.
    if slots {
        for i in 2..=l {
            let limit = tree.limit(i);
            // (the engine sizes an output's bits by the entries of the runs it merged, before the merge
            // kept one version of a key)
            let per_run = match tree.input_entries.get(i) {
                Some(&e) if e > 0.0 => e,
                _ => tree.alpha_entries[i],
            };
            if limit <= 1.0 || per_run <= 0.0 {
                continue;
            }
            let others: f64 = (1..=h)
                .filter(|&j| j != i)
                .map(|j| held[j] * b[j].min(MAX_BITS_PER_KEY))
                .sum();
            let cap = (budget - others).max(0.0) / (limit * per_run);
            b[i] = b[i].min(cap);
        }
    }
    let mut sum = 0.0;
    tree.filter_fpr = b
        .iter()
        .map(|bits| bloom::fpr(bits.min(MAX_BITS_PER_KEY)))
        .collect();
    for i in 1..=h {
        tree.fpr[i] = tree.filter_fpr[i];
        sum += tree.runs[i] * tree.fpr[i];
    }
    tree.fpr_sum = sum;
}

/// The most bits per key a filter gets (the engine's bound).
const MAX_BITS_PER_KEY: f64 = 40.0;

/// Whether the workload writes at all (inserts, updates or read-modify-writes).
fn writes(w: &Workload) -> bool {
    w.mix.insert + w.mix.blind_update + w.mix.rmw > 0.0
}

/// The steady state a lookup meets: the buffer fills from empty between flushes, and each level above the
/// last from empty between merges into the next, so on average each holds half its capacity; a workload that
/// never writes finds the buffer empty (whatever the load left there has been flushed) and the last level
/// holding every key.
/// A level is pushed down once it holds `fill` (the design's merge threshold θ) of its capacity, so it holds
/// θ/2 of it on average.
fn steady_state(tree: &mut Tree, writes: bool, effective_entries: f64, fill: f64) {
    let l = tree.l as usize;
    tree.alpha_entries[0] = if writes { tree.eb / 2.0 } else { 0.0 };
    for i in 1..l {
        tree.alpha_entries[i] = tree.run_entries[i] * fill / 2.0;
    }
    if l >= 1 {
        tree.alpha_entries[l] = tree.run_entries[l].min(effective_entries / tree.runs[l].max(1.0));
    }
}

/// Older versions a tiered last level (Z > 1) keeps: each run arriving there holds one push of writes, and
/// runs merge only once the level passes Z runs (two adjacent ones, the pair its run strategy picks), so
/// up to Z − 1 arrivals of updates stay beside it. The updates are the workload's operations times its update
/// share, less those a write buffer absorbed (a buffer keeps one version of a key however often it is written
/// while it fills). One arrival is what the levels above push down at, over the distinct keys' tree.
/// `kept` is the versions the updates leave in the flushes ([`kept_updates`]).
fn retained_versions(
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
fn kept_updates(
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
fn merged_arrival(parts: &[KeyPart], entries: f64, writes: Option<f64>) -> f64 {
    match writes {
        Some(w) if w > 0.0 && parts.iter().any(|p| p.put > 0.0) => {
            distinct_after(parts, w).min(entries)
        }
        _ => entries,
    }
}

/// Writes that reach `n` distinct keys of `parts`, at least `n` ([`writes_to_fill`]; None when they cannot).
fn writes_for(parts: &[KeyPart], n: f64) -> Option<f64> {
    writes_to_fill(parts, n).map(|w| w.max(n))
}

/// One run on its way down the levels, as the engine's planner makes it: its entries, the writes that made it
/// (None where they are not known), and, before the merges on the way kept one version of a key, the
/// entries its flushes held and those of the runs merged into it. `parts` is the key space whose repeats a
/// merge drops ([`merged_arrival`]).
#[derive(Clone, Copy, Debug)]
struct Arrival {
    entries: f64,
    writes: Option<f64>,
    flushed: f64,
    merged_in: f64,
}

impl Arrival {
    /// A run of `capacity` entries made whole: a flush, or a leveled level pushed down at its capacity.
    fn whole(capacity: f64, parts: &[KeyPart]) -> Self {
        Arrival {
            entries: capacity,
            writes: writes_for(parts, capacity),
            flushed: capacity,
            merged_in: capacity,
        }
    }

    /// What a tiered level pushes down after gathering `n` of these runs: one run of their distinct keys.
    fn merged(self, n: f64, parts: &[KeyPart]) -> Self {
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
/// [`steady_state`]'s half-full run.
fn cycle_runs(
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
/// [`cycle_runs`] (`cycled`) or [`steady_state`] shaped the runs: a flush holds the distinct keys of the writes
/// that reach its entries, a tiered level's run is one arrival from above (the writes of the runs merged into
/// it), and a leveled level's run holds half the writes between its pushes on average. Under skewed writes
/// these are more writes than the run has entries, so a hot key is more often in a recent run.
///
/// `base` is level 1's push size over T in entries, as the write cost computes it (`write_levels`), so the
/// two share their solutions of `writes_to_fill`. `repeats` is the key space whose repeats a merge of a tiered
/// level's runs drops (the updates'; empty without updates), which sizes a run pushed down from one.
fn run_writes(tree: &mut Tree, parts: &[KeyPart], repeats: &[KeyPart], base: f64, cycled: bool) {
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
fn never_pushed(tree: &mut Tree, parts: &[KeyPart], written: f64, fill: f64) -> bool {
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
fn group_last_level(
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

/// σ_l under YCSB's "latest": the key of recency rank r (1 = newest insert) is read with probability
/// r^{−θ}/H(N, θ); the newest keys sit in the buffer, the next ones in level 1 (half its capacity on average),
/// and so on down to the last level. A key found in level i has cost every run above it a filter false
/// positive (or a block, without filters), about half the runs of its own level, and its own block.
fn latest_lookup(tree: &Tree, theta: f64, entries: f64) -> f64 {
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
struct SimLevel {
    /// Runs on average (a level empty part of its cycle holds less than one)
    runs: f64,
    /// Entries on average
    entries: f64,
    /// Blocks a lookup pays passing the level without its key: every run's probe where the level spans the
    /// key space, else one probe for the share of the time and the key space its files cover (its files'
    /// share averaged over the writes, 0 while it is empty)
    pass: f64,
    /// Blocks of passing one run (a filter false positive, or a block without one, and the index block of a
    /// cold run)
    probe: f64,
    /// Index blocks of reaching the key in a run of the level (cold runs)
    index: f64,
    /// Blocks a scan's seeks read there: a seek (and the index block of a cold run) into every run it holds,
    /// whatever share of the key space its files cover (a scan of a count of keys needs each run's next key
    /// at or after its start, which lies in some file unless the start is past the run's last key), none
    /// while it is empty
    seeks: f64,
}

/// The simulation's levels priced with the model's costs of passing and seeking into a level's runs: the
/// simulation's level j takes the model's level j's, its last level the model's last (the two trees can
/// differ in depth: the model's last level holds every key, the simulation's what the merges left there).
fn sim_levels(
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
fn latest_lookup_simulated(levels: &[SimLevel], buffer: f64, theta: f64, entries: f64) -> f64 {
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

/// σ_l over the tree a load left ([`crate::loaded`]), for a workload that never writes: a lookup of a key held
/// by a run passes every run above it (newest first, level by level) whose files hold the key's range (a filter false
/// positive when the run is resident, its index block and a data block when cold: a cold run keeps no filter
/// in memory), then reads its own block (and the index block when cold). Runs keep their fences resident newest
/// first while M_FP lasts, the first that does not fit in part (the engine keeps its leading files' fences).
fn loaded_lookup(
    tree: &Tree,
    runs: &[crate::loaded::LoadedRun],
    fence_bytes: f64,
    per_entry: f64,
) -> f64 {
    let total: f64 = runs.iter().map(|r| r.entries).sum();
    let l = tree.l as usize;
    if total <= 0.0 || l == 0 {
        return 0.0;
    }
    let mut left = fence_bytes.max(0.0);
    // per run so far, the blocks of passing it with a key that lies in its files
    let mut passes: Vec<f64> = Vec::with_capacity(runs.len());
    let mut cost = 0.0;
    for r in runs {
        let need = r.entries * per_entry;
        let resident = if need <= left { 1.0 } else { left / need };
        left = if resident >= 1.0 { left - need } else { 0.0 };
        let i = r.level.clamp(1, l);
        let (index, cold) = (tree.index_cost[i], 1.0 - resident);
        // (a key this run holds lies in a run above's files for the share of its entries `within` says)
        let above: f64 = passes.iter().zip(&r.within).map(|(p, w)| p * w).sum();
        cost += r.entries / total * (above + 1.0 + cold * index);
        passes.push(resident * tree.hot_fpr[i] + cold * (1.0 + index));
    }
    cost
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
fn phase_runs(tree: &mut Tree, runs: &[f64]) -> bool {
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
fn phased_residency(tree: &mut Tree, mean: &Tree, fence_bytes: f64, shape: &DataShape) {
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

/// The planner's simulation of a load of `entries` and `workload`'s writes since
/// ([`crate::loaded::under_writes`]), its flushes holding `flush_entries` when given (a hash-log buffer's),
/// else what the sorted write buffer holds.
fn simulate_writes(
    design: &Design,
    workload: &Workload,
    entries: f64,
    parts: &[KeyPart],
    flush_entries: Option<f64>,
) -> Option<std::rc::Rc<crate::loaded::UnderWrites>> {
    let mut sizes = crate::loaded::Sizes::of(
        workload.key_bytes as usize,
        workload.value_bytes as usize,
        design.block_bytes as usize,
    );
    if let Some(eb) = flush_entries {
        sizes.buffer_entry = design.flush_bytes() as f64 / eb;
    }
    crate::loaded::under_writes(
        design,
        entries,
        sizes,
        (written_before(workload), written(workload)),
        parts,
        workload.mix.insert / write_share(workload),
    )
}

/// σ_l for keys of one partition: C_0 plus the filter-probe costs C_{r,i}, D_{r,i} weighted by p_i.
/// Returns None when such a key can never exist (q = 0).
/// `spans[i]`: the share of the key space level i's files cover, so that a lookup passing it probes it when
/// its key lies in one (1: the level spans the key space; 0: a lookup touches it only when it holds the key;
/// see `ReferenceQuirks::partial_levels_span_keys`). `scratch` is working memory the caller may reuse across
/// calls.
fn lookup_cost(tree: &Tree, part: &KeyPart, spans: &[f64], scratch: &mut Vec<f64>) -> Option<f64> {
    let l = tree.l as usize;
    scratch.clear();
    scratch.resize(7 * (l + 2), 0.0);
    let (la, rest) = scratch.split_at_mut(l + 2);
    let (prefix, rest) = rest.split_at_mut(l + 2);
    let (reach, rest) = rest.split_at_mut(l + 2);
    let (below, rest) = rest.split_at_mut(l + 2);
    let (one, rest) = rest.split_at_mut(l + 2);
    let (every, miss) = rest.split_at_mut(l + 2);
    // ln ā_i for i = 0 (buffer) ..= L; the block cache is empty (M_BC = 0), so ā_{−1} = 1. Per level also
    // e^{ln ā} − 1, e^{R ln ā} − 1 over its R whole runs, and e^{runs ln ā}: the chance the key is in none of
    // its runs (from the second when the runs are whole)
    for i in 0..=l {
        // (the linear form, α = put·n/U, counts the run's distinct keys; the exact one the writes it gathered)
        let n = match part.alpha {
            AlphaForm::Linear => tree.alpha_entries[i],
            AlphaForm::Exact => tree.alpha_writes[i],
        };
        // (a share of the stored keys a group holds whatever the writes did counts for the partitions whose α
        // counts writes; a linear partition's α already counts a run's entries among its keys)
        let share = match part.alpha {
            AlphaForm::Exact => tree.share_ln.get(i).copied().unwrap_or(0.0),
            AlphaForm::Linear => 0.0,
        };
        la[i] = KeySpace::ln_not_alpha(part, n) + share;
        if i >= 1 {
            let runs = tree.runs[i];
            let whole = runs.trunc();
            one[i] = la[i].exp_m1();
            every[i] = if whole == 0.0 {
                0.0
            } else {
                (whole * la[i]).exp_m1()
            };
            // (a level of w + f runs on average holds w runs for 1 − f of the time and w + 1 for f of it)
            miss[i] = if whole == runs {
                1.0 + every[i]
            } else {
                let f = runs - whole;
                (1.0 - f) * exp_or_zero(scaled(whole, la[i]))
                    + f * exp_or_zero(scaled(whole + 1.0, la[i]))
            };
        }
    }
    // prefix[i] = Σ_{h=1}^{i−1} runs_h ln ā_h, and as chances: reach[i] = e^{ln ā_0 + prefix[i]} (a lookup gets
    // past the buffer and levels 1..i−1), below[i] = e^{Σ_{h=i+1}^{L} runs_h ln ā_h} (the key is in none of
    // the levels under i); products of each level's chance instead of an exp per sum
    let level_miss = |i: usize| miss[i];
    reach[1] = exp_or_zero(la[0]);
    for i in 1..=l {
        prefix[i + 1] = prefix[i]
            + if tree.runs[i].trunc() == tree.runs[i] {
                scaled(tree.runs[i], la[i])
            } else {
                miss[i].ln()
            };
        if i < l {
            reach[i + 1] = reach[i] * level_miss(i);
        }
    }
    below[l] = 1.0;
    for i in (2..=l).rev() {
        below[i - 1] = below[i] * level_miss(i);
    }
    let disk = prefix[l + 1]; // ln Π
    let q = -(la[0] + disk).exp_m1();
    if !(q > 0.0) {
        return None;
    }
    let mut cost = reach[1] * -disk.exp_m1(); // C_0 (over q, as every term, at the end)
    for i in 1..=l {
        let idx = tree.index_cost[i];
        let runs = tree.runs[i] as u64;
        if idx > 0.0 {
            // the run that holds the key is reached through its on-disk index block too, when it is cold
            if tree.resident[i] <= 0.0 {
                // e^{runs·λ} − 1 is `every` when the runs are whole
                let all = if tree.runs[i].trunc() == tree.runs[i] {
                    every[i]
                } else {
                    miss[i] - 1.0
                };
                cost += idx * reach[i] * -all;
            } else {
                // Σ_r cold(r)·reach·e^{(r−1)λ}·hit over the runs with a cold share (the first after the
                // resident ones on), e^{(r−1)λ} by products of e^λ
                // (the first cold run may be cold in part; every one after it is wholly cold: a geometric sum)
                let hit = -la[i].exp_m1();
                let first_cold = (tree.resident[i].floor() as u64).saturating_add(1).max(1);
                let sum_over = |n: u64| {
                    if first_cold > n || tree.resident[i] >= tree.runs[i] {
                        0.0
                    } else {
                        tree.cold(i, first_cold as f64)
                            * exp_or_zero(scaled((first_cold - 1) as f64, la[i]))
                            + geometric(scaled(first_cold as f64, la[i]), la[i], n - first_cold)
                    }
                };
                cost += idx * reach[i] * hit * mixed(tree.runs[i], &sum_over);
            }
        }
        if spans[i] <= 0.0 {
            continue;
        }
        // one probe cost for the whole level unless it is partly resident
        let uniform = tree.resident[i] <= 0.0 || tree.resident[i] >= tree.runs[i];
        let level_p = tree.pass(i, 1.0);
        if uniform && level_p == 0.0 {
            continue;
        }
        let level = if uniform {
            // a level holding R = w + f runs on average (a tiered level over its fill cycle): w runs for
            // 1 − f of the time and w + 1 for f of it
            let over = |n: u64| {
                let every_n = if n == runs {
                    every[i]
                } else {
                    scaled(n as f64, la[i]).exp_m1()
                };
                level_pass_uniform(reach[i], one[i], every_n, below[i], n)
            };
            level_p * mixed(tree.runs[i], &over)
        } else {
            // Σ_r pass(r)·e^{before_r}·(1 − e^{after_r}·below) with before_r = ln ā_0 + prefix + rλ and
            // after_r = (R − r)λ: e^{before_r} by products of e^λ, and e^{before_r + after_r} is the same
            // for every run
            // The runs fall in three stretches of one pass cost each: the resident ones (r ≤ ⌊resident⌋), the
            // one resident in part, and the cold ones after it; e^{before_r} summed over a stretch is a
            // geometric sum, and e^{before_r} ≥ e^{before_R} ≥ e^{before_R + after_R}·below term by term.
            let start = la[0] + prefix[i];
            let over = |runs: u64| {
                let through = exp_or_zero(start + scaled(runs as f64, la[i])) * below[i];
                let stretch = |from: u64, to: u64| -> f64 {
                    if from > to {
                        return 0.0;
                    }
                    let n = to - from + 1;
                    let before = geometric(start + scaled(from as f64, la[i]), la[i], n);
                    tree.pass(i, from as f64) * (before - n as f64 * through).max(0.0)
                };
                let resident = (tree.resident[i].floor() as u64).min(runs);
                let part = resident + 1;
                stretch(1, resident) + stretch(part, part.min(runs)) + stretch(part + 1, runs)
            };
            mixed(tree.runs[i], &over)
        };
        // a level whose files cover a share c of the key space: a lookup whose key lies outside them skips
        // it. A key the level holds lies inside, so of the lookups that reach it without their key there
        // (1 − a of those that reach it, a the chance the key is there), (c − a)/(1 − a) are inside
        let level = if spans[i] < 1.0 {
            let a = -one[i];
            level * ((spans[i] - a) / (1.0 - a).max(f64::MIN_POSITIVE)).clamp(0.0, 1.0)
        } else {
            level
        };
        cost += level;
    }
    // (every term is over q, the chance the key is stored at all)
    Some(cost / q)
}

/// `f` over a level of `runs` runs on average, w + f of them: f(w) for 1 − f of the time and f(w + 1) for f
/// of it (a tiered level over its fill cycle).
fn mixed(runs: f64, f: &dyn Fn(u64) -> f64) -> f64 {
    let whole = runs.trunc();
    let frac = runs - whole;
    let w = whole as u64;
    if frac > 0.0 {
        (1.0 - frac) * f(w) + frac * f(w + 1)
    } else {
        f(w)
    }
}

/// Σ_{j=0}^{n−1} e^{x + jλ} for λ = ln ā ≤ 0 (a key's chance to get past j more runs of a level, from e^x): n
/// terms of a geometric series, e^x·(e^{nλ} − 1)/(e^λ − 1), n·e^x when λ = 0, and e^x alone when e^λ = 0.
fn geometric(x: f64, la: f64, n: u64) -> f64 {
    if n == 0 {
        return 0.0;
    }
    let first = exp_or_zero(x);
    if first == 0.0 {
        return 0.0;
    }
    if la == 0.0 {
        return first * n as f64;
    }
    let one = la.exp_m1();
    if one == -1.0 {
        return first;
    }
    first * scaled(n as f64, la).exp_m1() / one
}

/// The chance, summed over the `runs` runs of a level, that a lookup reaches run r without having found its key
/// (the chance it gets to the level: `reach`; ln ā of one run of the level: `la`) and that the key lies deeper
/// (the chance it is in no level below: `below`): Σ_{r=1}^{R} reach·e^{rλ}·(1 − e^{(R − r)λ}·below), in closed
/// form: reach·(Σ_r e^{rλ} − R·e^{Rλ}·below), two expm1 for the level instead of two exps per run.
/// `one` = e^λ − 1 and `every` = e^{Rλ} − 1 for the level's ln ā λ.
fn level_pass_uniform(reach: f64, one: f64, every: f64, below: f64, runs: u64) -> f64 {
    if runs == 0 || one == -1.0 {
        // no run, or every run holds the key: a lookup stops at the level's first run
        return 0.0;
    }
    let r = runs as f64;
    // Σ_{r=1}^{R} e^{rλ} = e^λ·(e^{Rλ} − 1)/(e^λ − 1), or R when λ = 0
    let geometric = if one == 0.0 {
        r
    } else {
        (1.0 + one) * every / one
    };
    (reach * (geometric - r * (1.0 + every) * below)).max(0.0)
}

/// Q_i: expected writes that fill level i (i = 0 is the buffer; i may be −1 in the reference code's B-tree use).
fn fill_writes(tree: &Tree, keys: &KeySpace, parts: &[KeyPart], i: i32) -> f64 {
    let (n, m, wc) = if i == 0 {
        (tree.eb, 1.0, tree.eb)
    } else {
        (
            tree.eb * tree.t.powi(i) / tree.k,
            tree.k,
            tree.eb * tree.t.powi(i),
        )
    };
    let q = match keys {
        KeySpace::Uniform { universe } => m * coupon_collector(*universe, n),
        KeySpace::Skew {
            special,
            regular,
            p_put,
            ..
        } => {
            let a = coupon_collector(*regular, n);
            let b = if n > *special {
                coupon_collector(*regular, n - special) / (1.0 - p_put)
            } else {
                f64::NEG_INFINITY
            };
            m * a.max(b)
        }
        KeySpace::Parts(_) => writes_to_fill(parts, n).map(|w| m * w).unwrap_or(-1.0),
    };
    q.max(wc)
}

/// σ_p (MODEL.md §2.6).
fn insert_cost(tree: &Tree, keys: &KeySpace, parts: &[KeyPart], quirks: &ReferenceQuirks) -> f64 {
    if tree.l == 0 {
        return 0.0;
    }
    let (t, k, z, eb, b) = (tree.t, tree.k, tree.z, tree.eb, tree.b);
    let h = tree.last_hot() as i32;
    let l = tree.l as i32;
    let mu = if t >= b { 1.0 } else { t.min(b - t) / (b - t) };
    let mut cost = 0.0;
    for i in 1..h {
        cost += eb * t.powi(i - 1) * (1.0 + t / k) / fill_writes(tree, keys, parts, i - 1) / b;
    }
    let reference_degenerate = quirks.btree_discount && h == 0;
    // Q_{h−1}, solved once for both uses
    let last_hot_fill =
        (h >= 1 || reference_degenerate).then(|| fill_writes(tree, keys, parts, h - 1));
    if let Some(q) = last_hot_fill {
        cost += eb * t.powi(h - 1) * (1.0 + t / z) / q / b;
    }
    if tree.y >= 1 {
        // the level feeding the cold levels: h − 1, or the buffer when every level is cold (fixed model)
        let src = if h >= 1 || reference_degenerate {
            h - 1
        } else {
            0
        };
        let q = match last_hot_fill {
            Some(q) => q,
            None => fill_writes(tree, keys, parts, src),
        };
        let flushed = eb * t.powi(src);
        for i in (h + 1)..=l {
            cost += (flushed * mu).min(eb * t.powi(i) / b) / q;
        }
    }
    cost
}

/// One level of the tree as our engine's flushes and compactions write it (the planner's rules, in entries).
#[derive(Clone, Copy, Debug)]
struct WriteLevel {
    /// Runs the level may hold (1: leveled).
    limit: f64,
    /// Entries at which the level is pushed down: θ of its capacity, (M_B/2)·T^i.
    push_at: f64,
    /// Pushed down file by file (partial compaction) rather than merged down whole.
    partial_out: bool,
    /// Entries of one file the writer cuts (what a partial push moves at a time).
    file_entries: f64,
    /// How the file a partial push moves overlaps the level below ([`Overlap`]).
    overlap: Overlap,
}

/// How much of the level below a file moved by partial compaction overlaps, by the file-picking rule
/// (quirk `files_overlap_evenly`: every file its even share).
#[derive(Clone, Copy, Debug, PartialEq)]
enum Overlap {
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
const DENSE_OVERLAP: f64 = 0.58;
/// `choose_first`'s span per entry moved per arrival, over the arrival's entries (simulated: 0.83-0.95).
const FIRST_SPAN: f64 = 0.85;

/// The levels our engine's planner writes for a tree of `l` levels: level i holds up to K runs above the last
/// hot level `h` and at it when it is not the last, Z below it and at the last level; it is pushed down at θ of
/// (M_B/2)·T^i bytes; partial compaction moves a leveled level into a leveled one file by file where the
/// design's compaction is partial at that level.
fn write_levels(
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
    let full_at = |i: u32| match design.compaction {
        Compaction::Full => true,
        Compaction::Partial => false,
        Compaction::Hybrid => i <= design.full_compaction_levels,
    };
    (1..=l.max(1))
        .map(|i| WriteLevel {
            limit: limit(i),
            push_at: base * t.powi(i as i32),
            partial_out: !full_at(i) && limit(i) <= 1.0 && limit(i + 1) <= 1.0,
            file_entries,
            overlap,
        })
        .collect()
}

/// The distinct keys a level that fills from empty holds on average while the writes from the `from`-th to
/// the `to`-th arrive: the mean of `distinct_after` over them (Simpson's rule on 8 intervals of the smooth,
/// concave curve; skewed writes reach most of their keys early, so from 0 this is well above half the distinct
/// keys of all of them); the distinct keys of `to` writes when the stretch is empty.
fn mean_distinct(parts: &[KeyPart], from: f64, to: f64) -> f64 {
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
fn engine_write_cost(
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

impl DistributionAware {
    fn evaluate_lsh(
        &self,
        design: &Design,
        workload: &Workload,
        shape: &DataShape,
        keys: &KeySpace,
    ) -> IoCost {
        let q = &self.quirks;
        let t = design.size_ratio as f64;
        let k = (t - 1.0).max(1.0);
        let b = shape.entries_per_block;
        // entries in `bytes` of the hash-log buffer (its allocations and table), or by the key and value
        // bytes alone (the quirk): a flush's, and the hybrid log's read-only region's
        let held_in = |bytes: f64| {
            if q.lsh_entries_by_payload {
                bytes / shape.entry_bytes
            } else {
                cosine_design::shape::hash_log_flush_entries(
                    bytes as usize,
                    workload.key_bytes as usize,
                    workload.value_bytes as usize,
                ) as f64
            }
        };
        let eb = held_in(q.flush_bytes(design));
        // bytes an entry weighs in a level (its run file's), as the planner pushes levels by
        let level_entry = if q.lsh_entries_by_payload {
            shape.entry_bytes
        } else {
            crate::loaded::Sizes::of(
                workload.key_bytes as usize,
                workload.value_bytes as usize,
                design.block_bytes as usize,
            )
            .disk_entry
            .max(shape.entry_bytes)
        };
        // entries of the hybrid log's read-only region (M_B less the mutable region), and N
        let e_ro = if design.read_only_bytes() > 0 {
            held_in(design.read_only_bytes() as f64)
        } else {
            0.0
        };
        let n = shape.entries.max(1.0);
        let mut parts = keys.parts_cow();
        if q.lsh_unconditioned {
            if let KeySpace::Skew { .. } = keys {
                let p = parts.to_mut();
                p.truncate(1);
                p[0].get = 1.0;
            }
        }
        let mut lookup = 0.0;
        let mut insert = 0.0;
        let mut weight = 0.0;
        // our engine's runs whose hash indexes do not fit M_FP: index blocks a lookup reads on its way
        let ages = LshAges::new(design, workload, shape, &parts, eb, k);
        // (the points of a level's cycle a lookup meets, made once for every key partition)
        let phases = ages.middle_phases();
        let mut cold_probes = 0.0;
        let hits = cache_hits(design, workload, &parts);
        let record_reads = self.lsh_engine.record_reads(shape.entry_bytes);
        // fixed model: the buffer is half full on average, and empty for a workload without writes
        let eb0 = if q.full_buffer {
            eb
        } else if writes(workload) {
            eb / 2.0
        } else {
            0.0
        };
        // Memory holds the log's newest records (entries, and whether a region outlives the load): our engine's
        // write buffer (the hybrid log's mutable region, updated in place) and the hybrid log's read-only region
        // (the newest flushed records); FASTER's log pages, always full. As for every design, the model prices
        // the steady state, in which a workload that writes has filled them with its own writes, drawn by the
        // write distribution (a short run after a load holds more of the load's records: the peer runs' YCSB-B,
        // 5,000 updates, read more than priced). A workload that does not write leaves the load's newest in the
        // regions that outlive the load, which the load wrote one per key: a uniform share of the N stored
        // keys, whichever keys the reads favour.
        let windows: [(f64, bool); 2] = match (self.lsh_engine, design.log) {
            (LshEngine::Faster, _) => [
                (design.buffer_bytes as f64 / shape.entry_bytes, true),
                (0.0, false),
            ],
            (LshEngine::Cosine, LogKind::Hybrid) => [(eb0, false), (e_ro, true)],
            (LshEngine::Cosine, LogKind::AppendOnly) => [(eb0, false), (0.0, false)],
        };
        let from_load: f64 = windows.iter().filter(|w| w.1).map(|w| w.0).sum();
        for (part, hit) in parts.iter().zip(hits.iter()) {
            // the chance the key is in memory
            let a0 = if q.lsh_calibrated {
                match design.log {
                    LogKind::AppendOnly => KeySpace::alpha(part, eb0),
                    // the authors' code: a mutable tail of 0.9 of the log's memory and a read-only 0.1
                    LogKind::Hybrid => {
                        let mutable = KeySpace::alpha(part, 0.9 * eb);
                        let read_only = KeySpace::alpha(part, 0.1 * eb);
                        1.0 - (1.0 - mutable) * (1.0 - read_only)
                    }
                }
            } else if writes(workload) {
                1.0 - windows
                    .iter()
                    .map(|&(w, _)| 1.0 - KeySpace::alpha(part, w))
                    .product::<f64>()
            } else {
                KeySpace::alpha(part, n) * (from_load / n).min(1.0)
            };
            let (on_disk, exists) = if q.lsh_calibrated {
                // the authors' code: a key exists when it is in memory or in one of K full runs (of
                // eb·T/K entries each for an append-only log, eb·T for the hybrid one)
                let run = match design.log {
                    LogKind::AppendOnly => eb * t / k,
                    LogKind::Hybrid => eb * t,
                };
                let pi = exp_or_zero(k * (-KeySpace::alpha(part, run)).ln_1p());
                ((1.0 - pi) * (1.0 - a0), 1.0 - pi * (1.0 - a0))
            } else {
                // a looked-up key is one of the N the store holds (K full runs would hold far more: with
                // T = 1000 and a sparse key space that counted 0.1% of the lookups in memory where our
                // engine answered 7% from its buffer); it is in memory with the odds a0 gives it
                let exists = KeySpace::alpha(part, n).max(a0);
                (exists - a0, exists)
            };
            if exists <= 0.0 {
                continue;
            }
            let cond = if q.lsh_unconditioned {
                on_disk
            } else {
                on_disk / exists
            };
            let (l_cost, p_cost) = match design.log {
                // our engine: the in-memory hash index points at the one block to read; a write is appended
                LogKind::AppendOnly if !q.lsh_calibrated => (record_reads * cond, 1.0 / b),
                LogKind::AppendOnly => (
                    self.calibration.lsh_lookup_scale * cond,
                    self.calibration.lsh_insert_scale * on_disk / exists,
                ),
                LogKind::Hybrid if !q.lsh_calibrated => {
                    (record_reads * cond, (1.0 / b).min(on_disk / exists))
                }
                LogKind::Hybrid => (cond, (1.0 / b).min(on_disk / exists)),
            };
            // a lookup the entry cache answers reads nothing
            lookup += part.get * (1.0 - hit) * l_cost;
            insert += part.put * p_cost;
            weight += part.get;
            // FASTER's hash index is in memory: no index block on the way
            if !q.lsh_calibrated && self.lsh_engine == LshEngine::Cosine {
                cold_probes += part.get
                    * (1.0 - hit)
                    * cond
                    * over_ages(&ages, &phases, |a| a.cold_probes(part));
            }
        }
        if weight > 0.0 && !q.lsh_unconditioned {
            lookup /= weight;
            cold_probes /= weight;
        }
        if let (KeyDistribution::Latest { theta }, false) = (&workload.reads, q.latest_as_zipfian) {
            // the newest keys are in the buffer (half full on average) and the hybrid log's read-only region;
            // any older one costs the one block its hash index points to
            let in_buffer = match self.lsh_engine {
                // FASTER's log pages: the newest records, the load's until writes replace them
                LshEngine::Faster if !q.lsh_calibrated => {
                    design.buffer_bytes as f64 / shape.entry_bytes
                }
                _ => {
                    let buffer = if writes(workload) { eb / 2.0 } else { 0.0 };
                    buffer + if q.lsh_calibrated { 0.0 } else { e_ro }
                }
            };
            let on_disk = 1.0 - harmonic(in_buffer.min(n), *theta) / harmonic(n, *theta);
            lookup = if q.lsh_calibrated {
                on_disk
            } else {
                record_reads * on_disk
            };
            // a read's key is the r-th newest insert with Zipf probability: older than y writes when r is
            // above y's share of inserts
            let m = &workload.mix;
            let inserts = m.insert / (m.insert + m.blind_update + m.rmw).max(1e-12);
            let inserts = if inserts > 0.0 { inserts } else { 1.0 };
            cold_probes = if self.lsh_engine == LshEngine::Faster {
                0.0
            } else {
                over_ages(&ages, &phases, |a| {
                    a.cold_probes_by_age(|y| {
                        1.0 - harmonic((y * inserts).min(n), *theta) / harmonic(n, *theta)
                    })
                })
            };
        }
        let s = workload.scan_length as f64;
        // the levels the log's runs fill: the versions they hold over the engine's level capacities
        let levels = ages.levels();
        let per_op = if q.lsh_calibrated {
            PerOp {
                lookup,
                // [R] a miss follows its hash bucket's chain to the log once: the index covers N/8 keys
                empty_lookup: 1.0,
                insert,
                blind_update: lookup + 1.0 / b,
                rmw: lookup + 1.0 / b,
                long_scan: s,
                short_scan: s,
            }
        } else {
            // the log's runs are sorted files under a hash index: a scan seeks into each (index block and
            // data block: the hash index cannot seek by key order) and reads s/B blocks in all
            let runs = ages.runs().max(1.0);
            // every lookup that leaves the buffers reads its block; on its way it reads the on-disk index of
            // each cold run newer than the one holding its key (no filter skips one)
            let lookup = lookup + cold_probes;
            // a write is appended to the log; the log's level is pushed down (its runs read, their distinct
            // keys written as one run below) once it holds K runs or θ of its capacity: what the planner's
            // simulation moves where it runs (a design that compacts partially), else the closed form
            let write = if q.table2_write_cost {
                1.0 / b
            } else if let Some(simulated) =
                self.lsh_simulated_write(design, workload, shape, &parts, eb)
            {
                simulated
            } else {
                engine_write_cost(
                    &write_levels(design, levels, levels, level_entry, q),
                    eb,
                    b,
                    &parts,
                    ages.versions(),
                    written_before(workload)..written(workload),
                    q.levels_always_fill,
                )
            };
            let insert = if q.table2_write_cost { insert } else { write };
            if self.lsh_engine == LshEngine::Faster {
                // FASTER: a write goes to its log's tail, written out a page at a time; a miss finds no key in
                // the in-memory index; a scan of s keys is s lookups (no ordered scan)
                let write = 1.0 / b;
                let scan = s * lookup;
                // (one log: FASTER's has no levels)
                return IoCost::lsh(
                    design,
                    workload,
                    1,
                    PerOp {
                        lookup,
                        empty_lookup: 0.0,
                        insert: write,
                        blind_update: write,
                        rmw: lookup + write,
                        long_scan: scan,
                        short_scan: scan,
                    },
                    scan,
                );
            }
            PerOp {
                lookup,
                // a miss reads the on-disk index of every cold run, and the data block it names
                empty_lookup: 2.0 * over_ages(&ages, &phases, LshAges::cold_runs),
                insert,
                blind_update: write,
                rmw: lookup + write,
                long_scan: 2.0 * runs + s / b,
                short_scan: 2.0 * runs,
            }
        };
        IoCost::lsh(design, workload, levels, per_op, per_op.long_scan)
    }
}

/// Where an LSH design's versions lie by age, and which of them M_FP's hash indexes cover (our engine keeps
/// the newest runs' indexes resident, file by file, and reads the others through their on-disk index).
///
/// Every flushed run holds one buffer's entries (`eb`). Until the first merge (the load's runs and the writes
/// since, at most K runs) the runs hold every version written. Later, as the engine's planner keeps the tree:
/// - the first level holds the D entries written since its last push, D anywhere in 0..(K − 1)·eb (K runs
///   pushed down at once, merged; the first push comes at its capacity): where in that cycle the operations
///   priced find it follows from the entries flushed before and during them, when they run less than a
///   cycle; when it is the only level it is also the last, which keeps Z runs by merging its two oldest on
///   each flush: the newest Z − 1 flushes, D = (Z − 1)·eb, over the merged run;
/// - a level between the first and the last holds (K − 1)/2 runs on average, each the merge of K^{j−1}
///   flushes (their distinct keys);
/// - the last level holds the merged run of the N live entries and, when tiered (Z > 1), the Z − 1 newest
///   runs pushed into it above that run (the planner merges the oldest two on each arrival); with Z = 1 each
///   push merges into the one run.
///
/// The writes the store has seen are its operations (χ₀ + χ: those before the workload's and its own) times
/// the write share: inserts add keys (N counts them), updates leave older versions behind, one per key a
/// buffer kept, so update-heavy workloads keep more versions than keys and the oldest runs' indexes go cold.
#[derive(Clone, Debug)]
pub struct LshAges {
    /// Entries whose hash index fits M_FP (the newest).
    resident: f64,
    /// Entries per run (one buffer).
    eb: f64,
    /// N: live entries.
    entries: f64,
    /// Older versions the updates left, when no merge has happened yet (the load's runs are then runs of eb
    /// too).
    unmerged: Option<f64>,
    /// Longest stretch of entries written between the first level's pushes: (K − 1)·eb, or what was written
    /// if less (a long run on a freshly loaded store meets no more); with `fixed`, the stretch the first level
    /// always holds.
    cycle: f64,
    /// Entries the first level holds at most once it has been pushed down: (K − 1)·eb, its K-th run pushing
    /// it (the load's runs count: where a short stretch meets the cycle follows from every entry flushed).
    cap: f64,
    /// Entries the first level holds above its merged run before its first push, while it is the last level:
    /// its newest Z − 1 flushes.
    cap_before_push: f64,
    /// The first level is the last and keeps its newest Z − 1 flushes: its stretch does not cycle.
    fixed: bool,
    /// Runs below the first level and above the last level's merged run, newest first.
    segments: Vec<Segment>,
    /// Levels the runs fill.
    levels: u32,
    /// Entries a run keeps per update: a buffer keeps one version of a key however often it is written while
    /// the buffer fills, so skewed updates leave fewer versions than writes.
    kept: f64,
    /// Entries flushed since the store was made (the load's and the writes' kept), when the operations priced
    /// begin and when they end: where the first level is in its cycle while they run.
    flushed: (f64, f64),
    /// Records the load put (N less the keys inserted since): the load's runs hold them, one per key.
    loaded: f64,
    /// Entries flushed when the first level is first pushed down: while it is the only level it is the last,
    /// which merges its runs in place and is pushed by bytes alone, at its capacity.
    first_push: f64,
}

/// `f` over `phases` ([`LshAges::middle_phases`], each with its weight), or over `ages` at their mean where
/// there are none.
fn over_ages(ages: &LshAges, phases: &[(f64, LshAges)], f: impl Fn(&LshAges) -> f64) -> f64 {
    if phases.is_empty() {
        return f(ages);
    }
    phases.iter().map(|(w, a)| w * f(a)).sum()
}

/// Runs of one level of an LSH design's tree, below the first: how many (a mean may be fractional), the
/// writes each covers (in entries kept: the flushes merged into it, times eb) and the entries it holds (their
/// distinct keys).
#[derive(Clone, Copy, Debug)]
struct Segment {
    count: f64,
    age: f64,
    stored: f64,
    /// Share of the entries it holds that are live keys N counts, not versions beyond them (the load's
    /// records, the inserts), where the merged run below holds none of them.
    live: f64,
    /// The runs hold the load's records (one per key, in the order the load wrote them), not writes.
    load: bool,
    /// Runs at which the level is pushed down where it fills and empties over a cycle (a level between the
    /// first and the last that has been through its cycle: 0, 1, .., K − 1 runs alike); 0 for the last
    /// level's runs and for a level between whose runs the writes so far cap
    cycles_at: f64,
}

/// Points a merge cycle's stretch of recent writes is sampled at.
const CYCLE_SAMPLES: usize = 8;
/// Points the first level's fill is sampled at over operations that run less than a cycle.
const PHASE_SAMPLES: usize = 16;
/// Share of the entries flushed by which the model may miscount them (a flush's entries, the versions an
/// update keeps): the phase of a cycle is known to within it.
const PHASE_SLACK: f64 = 0.05;
/// Steps of the integral over a run stretch's ages.
const AGE_STEPS: usize = 32;

impl LshAges {
    /// The ages of `design`'s runs under `workload` (K = `k` runs before a merge, `eb` entries a run).
    pub fn new(
        design: &Design,
        workload: &Workload,
        shape: &DataShape,
        parts: &[KeyPart],
        eb: f64,
        k: f64,
    ) -> Self {
        let per_entry = layout::HASH_INDEX_BYTES_PER_KEY + 16.0 / shape.entries_per_block.max(1.0);
        let m = &workload.mix;
        let eb = eb.max(1.0);
        // the writes that fill one buffer with eb distinct keys (as many as eb when the universe is vast)
        let kept = writes_to_fill(parts, eb).map_or(1.0, |w| (eb / w.max(eb)).clamp(0.0, 1.0));
        let kept = if kept > 0.0 { kept } else { 1.0 };
        // (the state after every operation so far, the workload's and those before it)
        let ops = workload
            .operations_before
            .saturating_add(workload.operations) as f64;
        let obsolete = ops * (m.blind_update + m.rmw) * kept;
        let written = (ops * m.insert + obsolete).max(0.0);
        let n = shape.entries.max(1.0);
        // the records the load put (the live entries less the keys inserted since)
        let loaded = (n - ops * m.insert).max(0.0);
        // the share of the writes that insert keys (each a live entry N counts)
        let inserted = if written > 0.0 {
            (ops * m.insert / written).clamp(0.0, 1.0)
        } else {
            0.0
        };
        let z = (design.cold_runs as f64).max(1.0);
        // no merge yet: the load's runs and every write since fit the K runs of a first level that keeps
        // its runs (a first level of one run, Z = 1, merges each flush into it)
        let unmerged = (z > 1.0 && (n + obsolete) / eb <= k).then_some(obsolete);
        let cap = (k - 1.0).max(0.0) * eb;
        let cycle = cap.min(written);
        // entries flushed when the operations priced end (the live entries, the load's among them, and the
        // versions the updates kept) and when they begin
        let this = workload.operations as f64;
        let flushed = (
            (n + obsolete - this * (m.insert + (m.blind_update + m.rmw) * kept)).max(0.0),
            n + obsolete,
        );
        // a run that merged `age` entries kept of writes holds their distinct keys
        let stored = |age: f64| age.min(distinct_after(parts, age / kept)).max(1.0);
        // the runs below the first level when the runs fill `levels` levels, and the first level's stretch
        // (`first`: the entries the first level holds on average while the operations run, not yet pushed below)
        let layout_of = |levels: u32, first: f64| -> (Vec<Segment>, f64, bool) {
            let mut segments = Vec::new();
            if levels <= 1 {
                let held = if z > 1.0 { (z - 1.0) * eb } else { 0.0 };
                return (segments, held.min(written), true);
            }
            for j in 2..levels {
                let age = k.powi(j as i32 - 1) * eb;
                // (until the level's first push, at its K-th run, it holds every run it was given)
                let cycled = written / age >= k;
                segments.push(Segment {
                    count: if cycled {
                        (k - 1.0) / 2.0
                    } else {
                        written / age
                    },
                    age,
                    stored: stored(age),
                    live: inserted,
                    load: false,
                    cycles_at: if cycled { k } else { 0.0 },
                });
            }
            if z > 1.0 {
                let age = k.powi(levels as i32 - 1) * eb;
                // the writes' runs: what was written and has left the first level
                let count = (z - 1.0).min((written - first).max(0.0) / age);
                segments.push(Segment {
                    count,
                    age,
                    stored: stored(age),
                    live: inserted,
                    load: false,
                    cycles_at: 0.0,
                });
                // the load's records were flushed as the writes are, into runs of the same age: those the
                // last level has not merged yet (it merges its oldest once it holds more than Z) lie between
                // the writes' runs and the merged run, one per key
                let load_runs = (z - 1.0 - count).min(loaded / age - 1.0);
                if load_runs > 0.0 {
                    segments.push(Segment {
                        count: load_runs,
                        age,
                        stored: age,
                        live: 1.0,
                        load: true,
                        cycles_at: 0.0,
                    });
                }
            }
            (segments, cycle, false)
        };
        // (levels weigh run files, as the planner does: an entry's key, value, header and block framing)
        let file_entry = crate::loaded::Sizes::of(
            workload.key_bytes as usize,
            workload.value_bytes as usize,
            design.block_bytes as usize,
        )
        .disk_entry
        .max(shape.entry_bytes);
        let levels_over = |entries: f64| {
            layout::level_count(
                entries,
                file_entry,
                design.level_base_bytes(),
                design.size_ratio as f64,
            )
            .max(1)
        };
        // the levels the live entries fill over the engine's level capacities; then as many more as the runs
        // the levels keep push the tree down (a level over its capacity by its versions is pushed into the
        // next). One level: the first is the last and keeps Z runs (with Z = 1, each flush merges into it)
        let first_push = design.level_base_bytes() * design.size_ratio as f64 / file_entry;
        let at = |levels: u32, first: f64| {
            let (segments, cycle, fixed) = layout_of(levels, first);
            LshAges {
                resident: design.fence_bytes as f64 / per_entry,
                eb,
                entries: n,
                unmerged,
                cycle,
                cap,
                cap_before_push: (z - 1.0) * eb,
                fixed,
                segments,
                levels,
                kept,
                flushed,
                first_push,
                loaded,
            }
        };
        // the first level's fill depends on its cycle alone, not on the runs below it (nor on their levels)
        let first = at(2, 0.0).first_level();
        let mut ages = at(levels_over(n), first);
        for _ in 0..4 {
            let deeper = levels_over(ages.merged_versions());
            if deeper <= ages.levels {
                break;
            }
            ages = at(deeper, first);
        }
        ages
    }

    /// Levels the runs fill: the live entries over the engine's level capacities, and as many more as the
    /// versions the levels keep (the first level's runs, the levels' between, a tiered last level's pushes)
    /// push the tree down.
    pub fn levels(&self) -> u32 {
        self.levels
    }

    /// The ages at the points of a cycle where the mean does not price them, each with its weight (summing to
    /// 1): at the first level between the first and the last whose runs, at the fullest point of its cycle
    /// (K − 1 runs), no longer all keep their hash indexes in what M_FP leaves them, as [`cycle_phases`] takes
    /// a tree's. The search's 1 MiB/30k pick for YCSB-A and F (T = 17, K = Z = 16, 30,000 keys) read 1.05-1.33
    /// blocks a lookup with its level 2's runs all resident and 2.8-3.3 with 13-14 runs there (9-10 of them
    /// resident), 1.72 over eight points of its cycle, where its mean, 7.5 runs, all resident, priced 1.27.
    /// Empty where every point fits, before the first merge, and where no level between cycles.
    fn middle_phases(&self) -> Vec<(f64, LshAges)> {
        if self.unmerged.is_some() {
            return Vec::new();
        }
        let mut above = self.first_level();
        for (j, s) in self.segments.iter().enumerate() {
            let n = s.cycles_at;
            if n >= 2.0 && s.stored > 0.0 && above + (n - 1.0) * s.stored > self.resident {
                let whole = ((self.resident - above).max(0.0) / s.stored).floor();
                let spread: RunSpread = (0..n as usize).map(|r| (r as f64, 1.0 / n)).collect();
                return stretches(&spread, whole)
                    .into_iter()
                    .map(|(w, runs)| {
                        let mut at = self.clone();
                        at.segments[j].count = runs;
                        (w, at)
                    })
                    .collect();
            }
            above += s.count * s.stored;
            if above > self.resident {
                break;
            }
        }
        Vec::new()
    }

    /// `f` over the ages a lookup meets ([`LshAges::middle_phases`], or these at their mean), weighted.
    pub fn over_phases(&self, f: impl Fn(&LshAges) -> f64) -> f64 {
        over_ages(self, &self.middle_phases(), f)
    }

    /// Runs on average: every eb-entry run until the first merge, then the merged run, the first level's
    /// runs (half a cycle's on average) and the runs of the levels between.
    pub fn runs(&self) -> f64 {
        match self.unmerged {
            Some(w) => (self.entries + w) / self.eb,
            None => {
                1.0 + self.first_level() / self.eb
                    + self.segments.iter().map(|s| s.count).sum::<f64>()
            }
        }
    }

    /// Cold runs on average (a run partly cold counts by its cold share).
    pub fn cold_runs(&self) -> f64 {
        let h = self.resident;
        match self.unmerged {
            Some(w) => (w + self.entries - h).max(0.0) / self.eb,
            None => self.over_cycle(|d| {
                let mut above = d;
                let mut cold = (d - h).max(0.0) / self.eb;
                for s in &self.segments {
                    let held = s.count * s.stored;
                    cold += (held - (h - above).clamp(0.0, held)) / s.stored;
                    above += held;
                }
                cold + self.base_cold(above)
            }),
        }
    }

    /// Expected blocks a lookup of a key of `part` reads beyond the one data block that holds the key, for
    /// cold runs. A cold file has neither its hash index nor a filter in memory: each cold run newer than the
    /// key's costs its on-disk index block and the data block that index names (2), and a cold run holding the
    /// key its index block (1). The key's newest version is older than the newest `y` writes with the chance
    /// that none of them wrote it (1 − α); a key not written since the load lies anywhere in the load's runs.
    pub fn cold_probes(&self, part: &KeyPart) -> f64 {
        // ages below are in entries kept; α takes writes
        let kept = self.kept;
        let older = |y: f64| 1.0 - KeySpace::alpha(part, y / kept);
        match self.unmerged {
            Some(w) => {
                let n = self.entries;
                let not_since = older(w);
                self.probes_unmerged(|y: f64| {
                    if y <= w {
                        older(y)
                    } else {
                        not_since * (1.0 - (y - w) / n).max(0.0)
                    }
                })
            }
            // ∫ older over a stretch in closed form
            None => self.probes_merged(
                older,
                |a: f64, b: f64| kept * crate::keys::not_written_integral(part, a / kept, b / kept),
                true,
            ),
        }
    }

    /// As [`LshAges::cold_probes`], with `older(y)` the chance that the key's newest version is older than the
    /// newest `y` entries over the whole tree (for "latest" reads, which follow insertion order).
    pub fn cold_probes_by_age(&self, older: impl Fn(f64) -> f64) -> f64 {
        match self.unmerged {
            Some(_) => self.probes_unmerged(older),
            None => self.probes_merged(&older, |a: f64, b: f64| integral(&older, a, b), false),
        }
    }

    /// Cold-run blocks when every run holds eb entries, `older(y)` over entry ages.
    fn probes_unmerged(&self, older: impl Fn(f64) -> f64) -> f64 {
        let h = self.resident;
        let end = self.entries + self.unmerged.unwrap_or(0.0);
        if h >= end {
            return 0.0;
        }
        2.0 * integral(&older, h, end) / self.eb + older(h)
    }

    /// Cold-run blocks over the first level's cycle: its runs (of eb entries each), the runs of the levels
    /// below it, newest first, then the merged run; M_FP covers the newest `resident` entries they hold.
    /// `area(a, b)` is ∫ older over [a, b]. With `by_key`, `older` runs over writes only: a key not written
    /// since the load lies in any of the load's runs (and the merged run) alike, by their share of its records.
    fn probes_merged(
        &self,
        older: impl Fn(f64) -> f64,
        area: impl Fn(f64, f64) -> f64,
        by_key: bool,
    ) -> f64 {
        let h = self.resident;
        let loaded = self.loaded.max(1.0);
        self.over_cycle(|d| {
            // the stretches newest first: (the writes they cover, the entries they hold, one run's writes)
            let first = Segment {
                count: d / self.eb,
                age: self.eb,
                stored: self.eb,
                live: 0.0,
                load: false,
                cycles_at: 0.0,
            };
            let mut blocks = 0.0;
            // writes and entries above the stretch at hand
            let (mut age, mut above) = (0.0, 0.0);
            // by key: where the load's runs begin, and the chance the key was not written since the load
            let mut load_from: Option<(f64, f64)> = None;
            // the chance the key's newest version is older than `y`, and its integral over [a, b]
            let older_at = |y: f64, from: Option<(f64, f64)>| match from {
                Some((w, not_since)) => not_since * (1.0 - (y - w) / loaded).max(0.0),
                None => older(y),
            };
            for s in std::iter::once(&first).chain(&self.segments) {
                let (width, held) = (s.count * s.age, s.count * s.stored);
                if width <= 0.0 {
                    continue;
                }
                if by_key && s.load && load_from.is_none() {
                    load_from = Some((age, older(age)));
                }
                // the stretch's newest entries are resident while M_FP lasts
                let warm = (h - above).clamp(0.0, held) / held;
                let cold_from = age + warm * width;
                let end = age + width;
                let stretch = match load_from {
                    Some((w, not_since)) => {
                        let (a, b) = ((cold_from - w).min(loaded), (end - w).min(loaded));
                        not_since * ((b - a) - (b * b - a * a) / (2.0 * loaded))
                    }
                    None => area(cold_from, end),
                };
                // each cold run newer than the key's: its index block and the data block it names; the cold
                // run that holds the key: its index block
                blocks += 2.0 * stretch / s.age + older_at(cold_from, load_from)
                    - older_at(end, load_from);
                age = end;
                above += held;
            }
            blocks + older_at(age, load_from) * self.base_cold(above)
        })
    }

    /// Versions the runs hold on average (live entries and older versions).
    pub fn versions(&self) -> f64 {
        match self.unmerged {
            Some(w) => self.entries + w,
            None => self.merged_versions(),
        }
    }

    /// Versions held once merges run: the live entries (the merged run's and the load's runs'), the first
    /// level's and the levels' below.
    fn merged_versions(&self) -> f64 {
        self.base()
            + self.first_level()
            + self
                .segments
                .iter()
                .map(|s| s.count * s.stored)
                .sum::<f64>()
    }

    /// Entries the first level holds on average while the operations priced run (half its cycle's stretch over
    /// a long run), or the stretch it always holds.
    fn first_level(&self) -> f64 {
        self.over_cycle(|d| d)
    }

    /// The cold share of the merged run below `above` entries of newer runs: M_FP covers the newest
    /// `resident` entries, the newer runs first.
    fn base_cold(&self, above: f64) -> f64 {
        1.0 - ((self.resident - above) / self.base()).clamp(0.0, 1.0)
    }

    /// Entries of the last level's merged run: the live entries less those the runs above it hold (the load's
    /// runs not merged yet, the inserts of the writes' runs).
    fn base(&self) -> f64 {
        let above: f64 = self
            .segments
            .iter()
            .map(|s| s.count * s.stored * s.live)
            .sum();
        (self.entries - above).max(1.0)
    }

    /// Entries flushed between two pushes of the first level once it has been pushed down: K runs', or its
    /// capacity's if that comes sooner.
    fn period(&self) -> f64 {
        (self.cap + self.eb).min(self.first_push.max(self.eb))
    }

    /// Entries the first level holds above its merged run when `x` entries have been flushed since the store
    /// was made: it is pushed down first at its capacity (while it is the only level it is the last, which
    /// merges its two oldest runs on each flush past Z and is pushed by bytes alone), then every
    /// [`LshAges::period`], filling up to its K-th run.
    fn fill_at(&self, x: f64) -> f64 {
        if x < self.first_push {
            x.min(self.cap_before_push)
        } else {
            ((x - self.first_push) % self.period()).min(self.cap)
        }
    }

    /// The mean of `f(d)`, d the entries the first level holds (written since its last push), while the
    /// operations priced run: over the points of its cycle they reach when they run less than a cycle (the
    /// validation's measured slices, a short workload), over the whole cycle otherwise; the stretch it always
    /// holds when it does not cycle.
    fn over_cycle(&self, f: impl Fn(f64) -> f64) -> f64 {
        if self.fixed {
            return f(self.cycle);
        }
        let (from, to) = self.flushed;
        // (the entries flushed are counted to within a share of them: the window widens by it)
        let slack = PHASE_SLACK * to;
        let (from, to) = ((from - slack).max(0.0), to + slack);
        if self.cap > 0.0 && to - from < self.period() {
            // the operations priced run over less than a cycle: the first level holds what was flushed since its
            // last push, at each point they reach
            return (0..PHASE_SAMPLES)
                .map(|i| {
                    let x = from + (to - from) * (i as f64 + 0.5) / PHASE_SAMPLES as f64;
                    f(self.fill_at(x))
                })
                .sum::<f64>()
                / PHASE_SAMPLES as f64;
        }
        (0..CYCLE_SAMPLES)
            .map(|i| f(self.cycle * (i as f64 + 0.5) / CYCLE_SAMPLES as f64))
            .sum::<f64>()
            / CYCLE_SAMPLES as f64
    }
}

/// ∫ f over [a, b] by the midpoint rule (0 when b ≤ a).
fn integral(f: impl Fn(f64) -> f64, a: f64, b: f64) -> f64 {
    if b <= a {
        return 0.0;
    }
    let step = (b - a) / AGE_STEPS as f64;
    (0..AGE_STEPS)
        .map(|i| f(a + step * (i as f64 + 0.5)))
        .sum::<f64>()
        * step
}

impl DistributionAware {
    /// The tree a tree-shaped (not LSH) design holds in the model's steady state: levels of runs over the
    /// distinct keys and the versions a tiered last level keeps, each run's entries, and which runs keep their
    /// fences and filters in memory. Returns it with the stored data's shape and the filter and fence memory.
    /// The tree a lookup under `workload` meets, as [`IoModel::evaluate`] prices it and
    /// [`DistributionAware::explain`] shows it: the steady state's ([`DistributionAware::shaped_tree`]), its
    /// levels' runs at the phase the planner's simulation of the writes gives where it runs ([`phase_runs`],
    /// residency worked out again over them), and the points of its levels' cycles where the mean does not
    /// price it ([`cycle_phases`]).
    fn met_tree(
        &self,
        design: &Design,
        workload: &Workload,
        shape: &DataShape,
        parts: &[KeyPart],
    ) -> MetTree {
        let q = &self.quirks;
        let (mut tree, stored, filter_bytes, fence_bytes) =
            self.shaped_tree(design, workload, shape, parts);
        let under_writes = self.under_writes(design, workload, &tree, shape, parts);
        let phased = match (under_writes.as_deref(), self.phased(workload, &tree)) {
            (Some(u), true) if u.runs.len() == tree.l as usize => {
                let mean = tree.clone();
                phase_runs(&mut tree, &u.runs);
                phased_residency(&mut tree, &mean, fence_bytes, &stored);
                true
            }
            _ => false,
        };
        let phases = cycle_phases(
            &tree,
            under_writes.as_deref().filter(|_| phased),
            fence_bytes,
            filter_bytes,
            &stored,
            q,
            writes(workload),
        );
        MetTree {
            tree,
            stored,
            filter_bytes,
            fence_bytes,
            under_writes,
            phases,
        }
    }

    fn shaped_tree(
        &self,
        design: &Design,
        workload: &Workload,
        shape: &DataShape,
        parts: &[KeyPart],
    ) -> (Tree, DataShape, f64, f64) {
        let q = &self.quirks;
        let btree_hint = design.filter_bytes == 0;
        // the entries the tree stores: the distinct keys, and the versions a tiered last level keeps; and
        // what has flowed down the tree: the keys and the versions the updates left in the flushes
        let kept = kept_updates(design, workload, shape, parts, q);
        let flowed = shape.effective_entries + kept;
        // the key space whose repeats a merge of a tiered level's runs drops: the updates' (a load's keys and
        // inserts are new keys, so a workload without updates merges no repeats)
        let m = &workload.mix;
        let repeats: &[KeyPart] = if m.blind_update + m.rmw > 0.0 {
            parts
        } else {
            &[]
        };
        let mut stored = *shape;
        if !q.distinct_keys_only {
            stored.effective_entries += retained_versions(design, shape, q, kept, repeats);
        }
        let (mut tree, filter_bytes, fence_bytes) = build_tree(design, &stored, q, btree_hint);
        if !q.full_buffer {
            let fill = if q.merge_threshold_ignored {
                1.0
            } else {
                design.merge_threshold.clamp(0.01, 1.0)
            };
            steady_state(&mut tree, writes(workload), stored.effective_entries, fill);
            if !q.tiered_levels_full_of_runs {
                cycle_runs(
                    &mut tree,
                    stored.effective_entries,
                    fill,
                    (!q.last_level_runs_alike).then_some(flowed),
                    repeats,
                );
            }
            if !q.entries_as_writes && writes(workload) {
                let base = design.level_base_bytes() / stored.entry_bytes;
                run_writes(
                    &mut tree,
                    parts,
                    repeats,
                    base,
                    !q.tiered_levels_full_of_runs,
                );
            } else {
                tree.alpha_writes = tree.alpha_entries.clone();
            }
            let stopped = !q.levels_always_fill
                && writes(workload)
                && never_pushed(&mut tree, parts, written(workload), fill);
            let l = tree.l as usize;
            if stopped && l >= 1 && tree.z > 1.0 && tree.arrival.0 > 0.0 {
                // nothing reaches the last level any more: it keeps the runs its entries fill, not the
                // arrivals that would have flowed down to it (`cycle_runs` counted those)
                let last = tree.runs[l] * tree.alpha_entries[l];
                let runs = (last / tree.arrival.0).round().clamp(1.0, tree.z);
                tree.runs[l] = runs;
                tree.run_entries[l] = last / runs;
                tree.alpha_entries[l] = last / runs;
            }
            if !q.last_level_runs_alike
                && !q.tiered_levels_full_of_runs
                && writes(workload)
                && !stopped
            {
                if q.entries_as_writes {
                    tree.arrival.1 = tree.arrival.0;
                }
                group_last_level(
                    &mut tree,
                    design.run_strategy,
                    shape.effective_entries,
                    written(workload),
                    flowed,
                );
                // (a run of n entries taken to hold the keys of n writes)
                if let (true, Some(groups)) = (q.entries_as_writes, tree.last_groups.as_mut()) {
                    groups.iter_mut().for_each(|g| g.writes = g.entries);
                }
            }
        }
        if !q.monkey_over_nominal_levels && !q.closed_form_fpr && !q.full_buffer {
            refilter(&mut tree, filter_bytes, !q.filters_over_mean_runs);
        }
        residency(
            &mut tree,
            fence_bytes,
            filter_bytes,
            &stored,
            q,
            writes(workload),
        );
        (tree, stored, filter_bytes, fence_bytes)
    }

    /// Whether `design` is priced as an LSH log rather than a tree: the reference code's rule uses the
    /// workload's entries per block; ours is the engine's own (`Design::runs_as_lsh`), so a design is priced as
    /// the shape the engine runs it as.
    fn prices_as_lsh(&self, design: &Design, shape: &DataShape) -> bool {
        if self.quirks.lsh_calibrated {
            design.filter_bytes == 0 && design.size_ratio as f64 > shape.entries_per_block
        } else {
            design.runs_as_lsh()
        }
    }

    /// Whether the runs a level above the last holds are priced as the planner's simulation has them over
    /// the workload's writes ([`phase_runs`]) rather than at a fill cycle's mean: whenever the simulation runs
    /// and no quirk decides the runs. (The simulation's mean over many cycles is not the closed form's: seed 1
    /// #9 averaged 6.98 blocks a lookup over 48 windows of the warm-up's second half, where the cycle's mean
    /// prices 6.57; a gate on the writes' length made the price jump between the two at its edge.)
    fn phased(&self, workload: &Workload, tree: &Tree) -> bool {
        tree.l >= 2 && writes(workload) && !self.quirks.shapes_runs()
    }

    /// An LSH design that compacts partially: blocks a write moves in the planner's simulation of the load and
    /// the writes since ([`crate::loaded::under_writes`]), with flushes of what the hash-log buffer holds.
    fn lsh_simulated_write(
        &self,
        design: &Design,
        workload: &Workload,
        shape: &DataShape,
        parts: &[KeyPart],
        eb: f64,
    ) -> Option<f64> {
        if design.compaction != Compaction::Partial
            || !writes(workload)
            || self.quirks.nominal_loaded_tree
            || self.quirks.table2_write_cost
            || self.lsh_engine != LshEngine::Cosine
            || eb < 1.0
        {
            return None;
        }
        // (a flush holds what the hash-log buffer holds)
        let u = simulate_writes(design, workload, shape.entries, parts, Some(eb))?;
        Some(u.moved_per_write / shape.entries_per_block)
    }

    /// The planner's simulation of the load and the writes since ([`crate::loaded::under_writes`]), for a
    /// workload that writes, when it is few enough flushes at the engine's own file granularity. It loads the
    /// data set's distinct keys (`shape`), not the stored entries with the versions a tiered level keeps: the
    /// simulation makes those versions itself from the writes. Given them twice, it priced development seed
    /// 4's #21 (T = 6, K = 4, Z = 2, partial, YCSB-A over 20,000 records) at 1.03 blocks a write against 2.20
    /// measured (2.21 now); over every stored report, write accuracy rose in each tree class.
    fn under_writes(
        &self,
        design: &Design,
        workload: &Workload,
        tree: &Tree,
        shape: &DataShape,
        parts: &[KeyPart],
    ) -> Option<std::rc::Rc<crate::loaded::UnderWrites>> {
        if tree.l == 0 || !writes(workload) || self.quirks.nominal_loaded_tree {
            return None;
        }
        simulate_writes(design, workload, shape.effective_entries, parts, None)
    }

    /// The levels the model prices `design` as holding under `workload` (a tree-shaped design; an LSH design,
    /// which the model prices as its log's levels, returns `None`): per level its runs, the entries of a run
    /// a lookup meets, how many runs keep their fences in memory, and the false-positive rate of a resident
    /// run's filter. `cosine validate` prints it beside the engine's tree.
    pub fn explain(
        &self,
        design: &Design,
        workload: &Workload,
    ) -> Result<Option<Vec<ModelLevel>>, ModelError> {
        design.validate()?;
        workload.validate()?;
        let keys = KeySpace::from_workload(workload);
        let shape = data_shape(design, workload, &keys, &self.quirks);
        if self.prices_as_lsh(design, &shape) {
            return Ok(None);
        }
        let parts = keys.parts_cow();
        let met = self.met_tree(design, workload, &shape, &parts);
        let tree = &met.tree;
        // (over the points of a cycle the mean does not price, their weighted runs and resident runs)
        let over = |f: &dyn Fn(&Tree) -> f64| met.weighted().map(|(w, t)| w * f(t)).sum::<f64>();
        Ok(Some(
            (1..=tree.l as usize)
                .map(|i| ModelLevel {
                    level: i as u32,
                    hot: i as u32 <= tree.last_hot(),
                    runs: over(&|t| t.runs[i]),
                    entries_per_run: tree.alpha_entries[i],
                    resident_runs: over(&|t| t.resident[i].min(t.runs[i])),
                    fpr: tree.hot_fpr[i],
                })
                .collect(),
        ))
    }
}

/// What [`DistributionAware::met_tree`] finds.
struct MetTree {
    /// The tree at its mean (or at the simulation's phase)
    tree: Tree,
    /// The data it stores (versions included)
    stored: DataShape,
    /// M_BF as the tree spends it
    filter_bytes: f64,
    /// M_FP as the tree spends it
    fence_bytes: f64,
    /// The planner's simulation of the writes, where it ran
    under_writes: Option<std::rc::Rc<crate::loaded::UnderWrites>>,
    /// The trees a lookup meets over time with their weights, where the mean does not price them (empty:
    /// `tree` prices them)
    phases: Vec<(f64, Tree)>,
}

impl MetTree {
    /// The trees a lookup meets, each with its weight.
    fn weighted(&self) -> impl Iterator<Item = (f64, &Tree)> {
        let mean = self.phases.is_empty().then_some((1.0, &self.tree));
        mean.into_iter()
            .chain(self.phases.iter().map(|(w, t)| (*w, t)))
    }
}

/// One level of the tree the model prices (see [`DistributionAware::explain`]).
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct ModelLevel {
    /// 1-based level.
    pub level: u32,
    /// Whether the level is one of the L − Y hot levels.
    pub hot: bool,
    /// Runs a lookup meets there: the steady state's average, or under writes the simulation's where the
    /// operations run ([`crate::loaded::UnderWrites::runs`]).
    pub runs: f64,
    /// Entries of one of those runs.
    pub entries_per_run: f64,
    /// Runs whose fences (and filters) are in memory.
    pub resident_runs: f64,
    /// False-positive rate of a resident run's filter (1 without filters).
    pub fpr: f64,
}

/// The data shape of a workload for a design's block size.
pub fn data_shape(
    design: &Design,
    workload: &Workload,
    keys: &KeySpace,
    quirks: &ReferenceQuirks,
) -> DataShape {
    let e = workload.entry_bytes() as f64;
    let n = workload.entries as f64;
    DataShape {
        entries: n,
        effective_entries: keys.effective_entries(n, quirks.skew_shrinks_entries),
        entry_bytes: e,
        key_bytes: workload.key_bytes as f64
            + if quirks.fence_is_key_only {
                0.0
            } else {
                layout::FENCE_POINTER_BYTES
            },
        entries_per_block: (design.block_bytes as f64 / e).floor().max(1.0),
    }
}

impl IoModel for DistributionAware {
    fn evaluate(&self, design: &Design, workload: &Workload) -> Result<IoCost, ModelError> {
        workload.validate()?;
        self.evaluate_with_keys(design, workload, &KeySpace::from_workload(workload))
    }
}

impl DistributionAware {
    /// `evaluate` with the workload's key space computed once by the caller (`KeySpace::from_workload`), for
    /// searches that score many designs on one workload. The workload must already be valid.
    pub fn evaluate_with_keys(
        &self,
        design: &Design,
        workload: &Workload,
        keys: &KeySpace,
    ) -> Result<IoCost, ModelError> {
        design.validate()?;
        if design.buffer_bytes < workload.entry_bytes() {
            return Err(ModelError::BufferTooSmall {
                buffer_bytes: design.buffer_bytes,
                entry_bytes: workload.entry_bytes(),
            });
        }
        let q = &self.quirks;
        let shape = data_shape(design, workload, keys, q);
        let b = shape.entries_per_block;
        if self.prices_as_lsh(design, &shape) {
            return Ok(self.evaluate_lsh(design, workload, &shape, keys));
        }
        let parts = keys.parts_cow();
        let met = self.met_tree(design, workload, &shape, &parts);
        let (tree, stored, filter_bytes, fence_bytes) =
            (&met.tree, &met.stored, met.filter_bytes, met.fence_bytes);
        let class = match DesignClass::classify(
            filter_bytes.round() as u64,
            tree.y,
            design.size_ratio,
            b as u64,
        ) {
            // priced as a tree (the engine runs it as one): a tree without filters is B-tree-like
            DesignClass::Lsh => DesignClass::Btree,
            c => c,
        };
        let (t, k, z, l, y, eb) = (tree.t, tree.k, tree.z, tree.l, tree.y, tree.eb);
        let h = tree.last_hot();
        let empty_lookup = if l == 0 {
            0.0
        } else {
            // a cold run costs its data block (no filter) plus, in the fixed model, its index block
            tree.fpr_sum + y as f64 * z * (1.0 + tree.index_cost[l as usize])
        };

        // whether a level spans the key space: compaction merges it whole, or it holds several runs (each
        // a whole flush or merge), or it is tiered (its runs arrive whole and leave whole, merged once it
        // holds its limit, however few it holds on average); a leveled level's single run that partial
        // compaction pushes down file by file holds only the ranges it has not pushed down yet
        let merged_whole = |i: u32| match design.compaction {
            Compaction::Full => true,
            Compaction::Partial => false,
            Compaction::Hybrid => i <= design.full_compaction_levels,
        };
        // under writes, the tree as the engine's planner keeps it, simulated (the load, then the writes'
        // flushes, each merge keeping one version of a key) when they are few enough flushes at the engine's
        // own file granularity: the runs each level above the last holds while the workload's writes run,
        // and the share of the key space a level that does not span it covers (else only the keys it holds)
        let under_writes = &met.under_writes;
        let spans: Vec<bool> = (0..=l)
            .map(|i| {
                q.partial_levels_span_keys
                    || merged_whole(i)
                    || tree.runs[i as usize] > 1.0
                    || (!q.tiered_levels_span_only_with_runs
                        && i >= 1
                        && tree.limit(i as usize) > 1.0)
            })
            .collect();
        let spans: Vec<f64> = spans
            .iter()
            .enumerate()
            .map(|(i, &whole)| match (whole, &under_writes) {
                (true, _) => 1.0,
                (false, Some(u)) if i >= 1 => u.covered.get(i - 1).copied().unwrap_or(0.0),
                _ => 0.0,
            })
            .collect();
        let mut lookup = 0.0;
        // the simulation's levels under the writes, where it ran (a latest lookup and a scan meet them)
        let simulated_levels = under_writes.as_deref().filter(|_| l > 0).map(|u| {
            let whole = |i: usize, runs: f64| {
                q.partial_levels_span_keys
                    || merged_whole(i as u32)
                    || runs > 1.0
                    || (!q.tiered_levels_span_only_with_runs && tree.limit(i.min(l as usize)) > 1.0)
            };
            sim_levels(tree, u, whole)
        });
        if let (KeyDistribution::Latest { theta }, false) = (&workload.reads, q.latest_as_zipfian) {
            lookup = match &simulated_levels {
                Some(levels) => {
                    latest_lookup_simulated(levels, tree.alpha_entries[0], *theta, shape.entries)
                }
                None => latest_lookup(&tree.for_lookups(&spans).0, *theta, shape.entries),
            };
        } else if l > 0
            && !writes(workload)
            && matches!(workload.writes, KeyDistribution::Uniform { .. })
            && !q.full_buffer
        {
            // the tree the load left, as the engine's planner builds it (when the load is not too many
            // flushes to simulate)
            let sizes = crate::loaded::Sizes::of(
                workload.key_bytes as usize,
                workload.value_bytes as usize,
                design.block_bytes as usize,
            );
            let loaded = if q.nominal_loaded_tree {
                None
            } else {
                crate::loaded::loaded_trees(design, stored.effective_entries, sizes)
            };
            if let Some(trees) = loaded {
                // averaged over where the load's end falls in its levels' fill cycles
                lookup = trees
                    .iter()
                    .map(|runs| loaded_lookup(tree, runs, fence_bytes, sizes.fence_per_entry))
                    .sum::<f64>()
                    / trees.len().max(1) as f64;
            } else {
                // After a uniform load and no writes each level holds its share of the keys. A level that compaction
                // merges whole spans the key space, so every lookup that passes it probes its runs (a filter
                // false positive, or a block without filters, plus the index when cold); a level that partial
                // compaction feeds file by file holds the contiguous key ranges it has not pushed down yet, so
                // only the lookups whose key it holds touch it, unless it holds several runs.
                let mut above = 0.0;
                for i in 1..=l {
                    let iu = i as usize;
                    let cold_share = 1.0 - (tree.resident[iu] / tree.runs[iu].max(1e-12)).min(1.0);
                    let own = 1.0 + tree.index_cost[iu] * cold_share;
                    lookup += layout::data_share(i, l, t) * (above + own);
                    // (a level of several runs spans the key space whatever the compaction: each run is a whole
                    // flush or merge)
                    above += spans[iu] * tree.pass_level(iu);
                }
            }
            // the entry cache answers the lookups of the keys the reads keep in it: the levels hold every key
            // alike (the load was uniform), but the reads themselves may be skewed (YCSB-C: zipfian reads over
            // a uniform load), so the hit chance comes from the read distribution's partitions (for uniform
            // reads it is n/N, n entries cached of the N stored)
            if design.cache_bytes > 0 {
                let hits = cache_hits(design, workload, &parts);
                let reads: f64 = parts.iter().map(|p| p.get).sum();
                let hit: f64 = parts.iter().zip(hits.iter()).map(|(p, h)| p.get * h).sum();
                lookup *= 1.0 - (hit / reads.max(1e-12)).clamp(0.0, 1.0);
            }
        } else if l > 0 {
            let mut scratch = Vec::new();
            let hits = cache_hits(design, workload, &parts);
            // the tree at its mean, or at the points of its cycles where the mean does not price it
            for (weight, tree) in met.weighted() {
                let (seen, spans) = tree.for_lookups(&spans);
                for (part, hit) in parts.iter().zip(hits.iter()) {
                    if part.get <= 0.0 {
                        continue;
                    }
                    // ā_{−1}: a lookup the entry cache answers reaches neither buffer nor runs (MODEL.md §2.2)
                    lookup += weight
                        * part.get
                        * (1.0 - hit)
                        * lookup_cost(&seen, part, &spans, &mut scratch).unwrap_or(empty_lookup);
                }
            }
        }
        if q.btree_discount && class == DesignClass::Btree {
            lookup *= self.calibration.btree_read_discount;
        }
        // a design whose levels partial compaction empties file by file writes what the planner's simulation
        // under the writes moves, where it runs: which files a moved file overlaps, and which of them move down
        // as they are, follow from where the data lies, which the closed form takes from a rule per picking
        let simulated = match (&under_writes, design.compaction) {
            (Some(u), Compaction::Partial) => Some(u.moved_per_write / b),
            _ => None,
        };
        let insert = if q.table2_write_cost {
            insert_cost(tree, keys, &parts, q)
        } else if let Some(write) = simulated {
            write
        } else {
            engine_write_cost(
                &write_levels(design, l, h, shape.entry_bytes, q),
                eb,
                b,
                &parts,
                stored.effective_entries,
                written_before(workload)..written(workload),
                q.levels_always_fill,
            )
        };
        let filtered = filter_bytes > 0.0;
        let out_of_place = filtered || !q.in_place_unfiltered_updates;
        let blind_update = if out_of_place {
            insert
        } else {
            lookup + 1.0 / b
        };
        let rmw = if out_of_place {
            lookup + insert
        } else {
            lookup + 1.0 / b
        };

        let s = workload.scan_length as f64;
        let n = shape.entries;
        // a scan seeks into every run of the tree, or of the simulation's levels under the writes where it
        // ran, which hold fewer runs on average than the model's where a level is empty part of its cycle.
        // Development seed 3's #11 (T = 2, K = Z = 1, hybrid compaction, YCSB-E at 40,000 keys: levels 1
        // and 2 empty about half the time) was priced 10.12 blocks a scan over the model's levels, against
        // 7.11 measured; the engine's scans sought its partial levels 3-6 every time, though their files
        // cover part of the key space.
        let seeks: f64 = match &simulated_levels {
            Some(levels) => levels.iter().map(|level| level.seeks).sum(),
            // (over the points of a cycle the mean does not price: a cold run's seek reads its index block)
            None => met
                .weighted()
                .map(|(w, t)| w * (1..=l as usize).map(|i| t.seeks(i)).sum::<f64>())
                .sum(),
        };
        let is_btree_scan = if q.btree_discount {
            design.size_ratio.is_multiple_of(16) && design.hot_runs == 1 && !filtered
        } else {
            class == DesignClass::Btree
        };
        let long_scan = if l == 0 {
            0.0
        } else if !q.scan_full_levels {
            // each run yields its share of the s keys: one seek (plus its index block when cold), then
            // sequential blocks
            let data: f64 = (1..=l).map(|i| s * layout::data_share(i, l, t) / b).sum();
            seeks + data
        } else if is_btree_scan {
            if q.btree_discount {
                l as f64 - 1.0 + s / b
            } else {
                y.saturating_sub(1) as f64 + s / b
            }
        } else {
            let first_end = if q.scan_double_count { h } else { h.min(l - 1) };
            let mut cap: f64 = (1..=first_end).map(|i| eb * t.powi(i as i32)).sum();
            if t < b && l >= 2 {
                cap += ((h + 1)..=(l - 2))
                    .map(|i| eb * t.powi(i as i32))
                    .sum::<f64>();
            }
            cap += eb * t.powi(l as i32);
            let extra = if t == b && y > 0 { y as f64 - 1.0 } else { 0.0 };
            2.0 * (s / n) / b * cap + extra
        };
        let short_scan = if l == 0 {
            0.0
        } else if y == 0 && q.short_scan_kl {
            k * l as f64
        } else {
            k * h.saturating_sub(1) as f64 + z * (y as f64 + 1.0)
        };
        let short_scan = if q.scan_full_levels || l == 0 {
            short_scan
        } else {
            seeks
        };
        let long_scan = if !q.scan_full_levels || q.scan_without_seeks || is_btree_scan || l == 0 {
            long_scan
        } else {
            long_scan + short_scan
        };
        let scan = if s <= b && q.scan_full_levels {
            short_scan
        } else {
            long_scan
        };
        let per_op = PerOp {
            lookup,
            empty_lookup,
            insert,
            blind_update,
            rmw,
            long_scan,
            short_scan,
        };
        let per_operation = weigh(workload, &per_op, scan);
        Ok(IoCost {
            class,
            levels: l,
            cold_levels: y,
            fpr_sum: tree.fpr_sum,
            filter_bytes,
            fence_bytes,
            per_op,
            scan,
            per_operation,
            total: per_operation * workload.operations as f64,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::WorstCase;
    use cosine_design::{KeyDistribution, OperationMix};
    use proptest::prelude::*;

    const N: u64 = 100_000_000;

    fn workload(mix: OperationMix) -> Workload {
        let mut w = Workload::with_mix(mix);
        w.entries = N;
        w.key_bytes = 16;
        w.value_bytes = 112;
        w.scan_length = 1000;
        w
    }

    fn all_ops() -> OperationMix {
        OperationMix {
            lookup: 0.2,
            empty_lookup: 0.2,
            insert: 0.2,
            blind_update: 0.1,
            rmw: 0.1,
            scan: 0.2,
        }
    }

    /// A leveled/tiered LSM with fences for every block and `bits` filter bits per key.
    /// `d` with fence memory to spare: every run its steady state holds keeps its fences in memory.
    fn roomy(mut d: Design) -> Design {
        d.fence_bytes *= 2;
        d
    }
    fn lsm(t: u64, k: u64, z: u64, bits: f64) -> Design {
        let mut d = Design::rocksdb_like(64 << 20, (bits * N as f64 / 8.0) as u64, N * 37 / 32);
        d.size_ratio = t;
        d.hot_runs = k;
        d.cold_runs = z;
        d
    }

    fn eval(d: &Design, w: &Workload) -> IoCost {
        DistributionAware::new().evaluate(d, w).unwrap()
    }

    /// The model with some of the reference code's quirks.
    fn eval_with(quirks: ReferenceQuirks, d: &Design, w: &Workload) -> IoCost {
        DistributionAware {
            quirks,
            ..Default::default()
        }
        .evaluate(d, w)
        .unwrap()
    }

    #[test]
    fn a_tiered_last_level_holds_the_runs_its_entries_fill() {
        // T = 32, K = Z = 31 without filters, fences in memory: each run of the last level is one push of level
        // 1 (31 flushes), so the data fills a few of its 31 runs; a lookup that reaches it probes those, not 31
        let mut d = lsm(32, 31, 31, 0.0);
        d.filter_bytes = 0;
        d.class = None;
        let w = workload(OperationMix {
            lookup: 1.0,
            ..OperationMix::default()
        });
        let flush = d.flush_bytes() as f64 / 128.0;
        let pushes = N as f64 / (31.0 * flush);
        assert!(pushes > 2.0 && pushes < 20.0, "{pushes} pushes");
        // (the steady state's runs: the tree a load leaves is checked in `crate::loaded`)
        let steady = ReferenceQuirks {
            nominal_loaded_tree: true,
            ..ReferenceQuirks::NONE
        };
        let fixed = eval_with(steady, &d, &w);
        let full = eval_with(
            ReferenceQuirks {
                tiered_levels_full_of_runs: true,
                ..steady
            },
            &d,
            &w,
        );
        // a lookup without filters reads a block of every run it passes: level 1's (15 on average, it is
        // pushed down at its 31st) and about half the last level's, not 31 and 31/2
        assert!(
            full.per_op.lookup > 1.6 * fixed.per_op.lookup,
            "{} against {}",
            full.per_op.lookup,
            fixed.per_op.lookup
        );
        assert!(
            fixed.per_op.lookup < 15.0 + pushes / 2.0 + 2.0,
            "{} for {pushes} runs",
            fixed.per_op.lookup
        );
    }

    #[test]
    fn a_full_tiered_last_level_gathers_keys_in_the_run_its_strategy_merges() {
        // T = 8, K = 2, Z = 6 without filters, fences in memory, 800,000 keys (the key space) updated fifty
        // times over: two
        // levels, the last one's runs arriving two flushes at a time, so it has long passed its 6 runs. Under
        // `first` its oldest run gathers every key and the 5 newer ones an arrival each, so a lookup of a key
        // not written lately reads a block of each of those 5 first; under `last_full` its newest run gathers
        // every key written since, so a lookup that reaches the level ends in its first run
        let mut d = lsm(8, 2, 6, 0.0);
        d.filter_bytes = 0;
        d.class = None;
        // flushes of 2 MiB (16,384 entries)
        d.buffer_bytes = 4 << 20;
        let mut w = workload(OperationMix {
            lookup: 0.5,
            blind_update: 0.5,
            ..OperationMix::default()
        });
        w.entries = 800_000;
        w.writes = KeyDistribution::Uniform {
            universe: Some(800_000),
        };
        w.reads = w.writes.clone();
        w.operations = 80_000_000;
        let priced = |quirks: ReferenceQuirks, strategy: RunStrategy, w: &Workload| {
            let mut d = d.clone();
            d.run_strategy = strategy;
            let model = DistributionAware {
                quirks,
                ..Default::default()
            };
            let keys = KeySpace::from_workload(w);
            let shape = data_shape(&d, w, &keys, &model.quirks);
            let (tree, ..) = model.shaped_tree(&d, w, &shape, &keys.parts_cow());
            (model.evaluate(&d, w).unwrap().per_op.lookup, tree)
        };
        let (first, tree) = priced(ReferenceQuirks::NONE, RunStrategy::First, &w);
        let [newer, older] = tree.last_groups.expect("the last level has passed Z runs")[..] else {
            panic!("two groups")
        };
        assert_eq!(
            (newer.runs, newer.share, older.runs, older.share),
            (5.0, 0.0, 1.0, 1.0)
        );
        let (last_full, tree) = priced(ReferenceQuirks::NONE, RunStrategy::LastFull, &w);
        // (level 2 was made by level 1 pushed down whole: `last_full` never merges that run, the oldest, nor
        // the 4 arrivals after it; the newest gathers the rest)
        let [newer, older, made] = tree.last_groups.unwrap()[..] else {
            panic!("three groups")
        };
        assert_eq!((newer.runs, older.runs, made.runs), (1.0, 4.0, 1.0));
        assert!(
            newer.entries > older.entries && older.share < 0.5 && made.share < 0.5,
            "{newer:?} {older:?} {made:?}"
        );
        // every key is written about 50 times: the newest run holds nearly all of them, so `last_full`
        // saves most of the 5 arrivals' blocks a `first` lookup passes (each holds about one key in 25)
        assert!(
            first - last_full > 4.0,
            "first {first}, last_full {last_full}"
        );
        // runs priced alike: the strategy changes nothing, and the lookup lies between the two
        let alike = ReferenceQuirks {
            last_level_runs_alike: true,
            ..ReferenceQuirks::NONE
        };
        let (a, tree) = priced(alike, RunStrategy::First, &w);
        let (b, _) = priced(alike, RunStrategy::LastFull, &w);
        assert!(tree.last_groups.is_none());
        assert_eq!(a, b);
        assert!(last_full < a && a < first, "{last_full} < {a} < {first}");
    }

    #[test]
    fn a_tiered_last_level_below_level_one_holds_the_run_that_made_it() {
        // Seed 7's held-out random #7 (an LSM of T = 11, K = 4, Z = 10, YCSB-E over 30,000 records and as many
        // inserts): level 2, then the last, was pushed down whole at its capacity (121 flushes) and made level
        // 3; since then level 2 has pushed down five arrivals of 16 flushes. The engine held 6 runs there (the
        // shape simulator too: 123 flushes under five of 16), priced as 10 runs of one arrival each before:
        // 15.4 blocks a scan against 9.1 measured.
        let (mut w, mut d) = validated_hybrid(60_000, 300_000, 11, 618_659, 352_531, 77_386);
        w.writes = KeyDistribution::Uniform { universe: None };
        w.reads = KeyDistribution::Zipfian {
            theta: 0.99,
            universe: Some(60_000),
            items: Some(10_000_000_000),
        };
        w.mix = OperationMix {
            scan: 0.95,
            insert: 0.05,
            ..OperationMix::default()
        };
        w.scan_length = 50;
        w.operations = 600_000;
        d.block_bytes = 32_768;
        d.hot_runs = 4;
        d.cold_runs = 10;
        d.compaction = Compaction::Full;
        d.run_strategy = RunStrategy::First;
        let model = DistributionAware::new();
        let keys = KeySpace::from_workload(&w);
        let shape = data_shape(&d, &w, &keys, &model.quirks);
        let (tree, ..) = model.shaped_tree(&d, &w, &shape, &keys.parts_cow());
        // (5 priced: the levels above hold their fill cycles' mean, more than the engine's at its run's end)
        assert!(
            tree.l == 3 && (5.0..=6.0).contains(&tree.runs[3]),
            "{:?}",
            tree.runs
        );
        let [arrivals, made] = tree
            .last_groups
            .expect("the arrivals above the run that made it")[..]
        else {
            panic!("two groups")
        };
        assert_eq!(
            (arrivals.runs + 1.0, made.runs, made.share),
            (tree.runs[3], 1.0, 1.0)
        );
        assert!(
            made.entries > 2.0 * arrivals.entries,
            "{made:?} {arrivals:?}"
        );
        // a scan seeks into 6 runs there, not 10 (the closed form's tree: without the simulation under the
        // writes, which prices the scans where it runs)
        let closed_form = ReferenceQuirks {
            nominal_loaded_tree: true,
            ..ReferenceQuirks::NONE
        };
        let alike = eval_with(
            ReferenceQuirks {
                last_level_runs_alike: true,
                ..closed_form
            },
            &d,
            &w,
        );
        let fixed = eval_with(closed_form, &d, &w);
        assert!(
            fixed.scan < alike.scan - 3.0,
            "{} against {}",
            fixed.scan,
            alike.scan
        );
        // the simulation's levels under the writes: the engine's 9.1 blocks a scan
        let simulated = eval(&d, &w).scan;
        assert!((simulated - 9.1).abs() < 0.15 * 9.1, "{simulated}");
    }

    #[test]
    fn a_tiered_levels_filters_are_sized_for_its_run_limit() {
        // The search's 1 MiB/60k hybrid pick under YCSB-F (held out, seed 1): T = 32, K = Z = 31, 80 KB of
        // filters. Level 2 holds 15 runs on average, but the engine sizes each compaction output's filter for
        // the 31 it may gather: about 4 bits a key, where Monkey's share over 15 runs gives about 9. Measured:
        // about 9% of level 2's probes of runs without the key came back positive (24,368 negatives, at least
        // 2,483 false positives); priced at 1.6% before, 2.18 blocks a lookup against 3.17 measured.
        let (mut w, mut d) = validated_hybrid(60_000, 300_000, 32, 308_019, 80_557, 660_000);
        w.mix = OperationMix {
            lookup: 0.5,
            rmw: 0.5,
            ..OperationMix::default()
        };
        d.hot_runs = 31;
        d.cold_runs = 31;
        d.compaction = Compaction::Full;
        let over_mean = ReferenceQuirks {
            filters_over_mean_runs: true,
            ..ReferenceQuirks::NONE
        };
        let fixed = explain_with(ReferenceQuirks::NONE, &d, &w);
        let mean = explain_with(over_mean, &d, &w);
        assert!(fixed[1].hot && fixed[1].runs > 10.0, "{fixed:?}");
        assert!(
            fixed[1].fpr > 0.05 && fixed[1].fpr < 0.2 && mean[1].fpr < 0.03,
            "{} against {}",
            fixed[1].fpr,
            mean[1].fpr
        );
        // level 1's flushes keep Monkey's bits
        assert_eq!(fixed[0].fpr, mean[0].fpr);
        let priced = eval(&d, &w).per_op.lookup;
        // (level 2's cold runs late in its cycle, which `cycle_phases` prices alike either way, are most of
        // both prices: 4.18 against 3.49)
        let mean_priced = eval_with(over_mean, &d, &w).per_op.lookup;
        assert!(priced > 1.15 * mean_priced, "{priced} {mean_priced}");
    }

    #[test]
    fn versions_a_tiered_last_level_keeps_deepen_the_tree() {
        // T = 32, K = 1, Z = 31: five million distinct keys fit level 1 (8.4 million a flush of 262k entries
        // times T), but under updates its runs keep up to 30 flushes of versions beside the distinct keys, and
        // the level is pushed down: level 1 then merges in place, leveled, and a write pays for it
        let d = lsm(32, 1, 31, 10.0);
        let mut w = workload(OperationMix {
            lookup: 0.5,
            blind_update: 0.5,
            ..OperationMix::default()
        });
        w.entries = 5_000_000;
        w.operations = 50_000_000;
        let fixed = eval(&d, &w);
        let distinct = eval_with(
            ReferenceQuirks {
                distinct_keys_only: true,
                ..ReferenceQuirks::NONE
            },
            &d,
            &w,
        );
        assert_eq!((distinct.levels, fixed.levels), (1, 2));
        assert!(
            fixed.per_op.blind_update > 2.0 * distinct.per_op.blind_update,
            "{} against {}",
            fixed.per_op.blind_update,
            distinct.per_op.blind_update
        );
        // without updates there are no versions to keep
        w.mix = OperationMix {
            lookup: 1.0,
            ..OperationMix::default()
        };
        assert_eq!(eval(&d, &w).levels, 1);
    }

    #[test]
    fn the_first_cold_level_keeps_its_newest_runs_fences() {
        // tiered, T = 8, K = Z = 7: M_FP for the upper levels and about half the last level's runs
        let mut d = lsm(8, 7, 7, 10.0);
        let w = workload(OperationMix {
            lookup: 1.0,
            ..OperationMix::default()
        });
        let hot_or_cold = ReferenceQuirks {
            levels_hot_or_cold: true,
            ..ReferenceQuirks::NONE
        };
        let all = eval(&d, &w);
        assert_eq!(all.cold_levels, 0);
        d.fence_bytes = (all.fence_bytes * 0.5) as u64;
        let fixed = eval(&d, &w);
        let whole = eval_with(hot_or_cold, &d, &w);
        assert_eq!((fixed.cold_levels, whole.cold_levels), (1, 1));
        // a run kept resident costs a false positive, not an index block and a data block
        assert!(
            fixed.per_op.lookup < 0.9 * whole.per_op.lookup,
            "{} against {}",
            fixed.per_op.lookup,
            whole.per_op.lookup
        );
        assert!(fixed.per_op.lookup > all.per_op.lookup);
        assert!(fixed.per_op.long_scan < whole.per_op.long_scan);
    }

    #[test]
    fn a_cold_run_is_passed_without_its_filter_at_a_hot_level_too() {
        // the engine keeps a run's filter in memory only while its fences are (`RunFile::set_residency`): with
        // no fence memory every run is cold, a hot level's too, and passing one reads its index block and a
        // data block whatever the level's filter would have cost
        let d = lsm(8, 7, 7, 10.0);
        let w = workload(OperationMix {
            lookup: 1.0,
            ..OperationMix::default()
        });
        let q = ReferenceQuirks::NONE;
        let shape = data_shape(&d, &w, &KeySpace::from_workload(&w), &q);
        let (mut tree, filter_bytes, _) = build_tree(&d, &shape, &q, false);
        refilter(&mut tree, filter_bytes, true);
        let h = tree.last_hot() as usize;
        assert!(h >= 1 && tree.fpr[1] < 0.05, "{h} {}", tree.fpr[1]);
        residency(&mut tree, 0.0, filter_bytes, &shape, &q, false);
        assert_eq!(tree.resident[1], 0.0);
        assert_eq!(tree.pass_level(1), tree.runs[1] * 2.0);
        assert_eq!(tree.pass(1, 1.0), 2.0);
        // with every fence in memory the same level costs its filter's false positives
        residency(&mut tree, f64::MAX, filter_bytes, &shape, &q, false);
        assert!((tree.pass_level(1) - tree.runs[1] * tree.fpr[1]).abs() < 1e-12);
    }

    #[test]
    fn a_level_in_closed_form_is_the_sum_over_its_runs() {
        // Σ_{r=1}^{R} reach·e^{rλ}·(1 − e^{(R − r)λ}·below), run by run, against the closed form
        for runs in [1u64, 2, 3, 7, 31, 200] {
            for la in [
                0.0,
                -1e-12,
                -1e-6,
                -0.01,
                -0.7,
                -5.0,
                -40.0,
                f64::NEG_INFINITY,
            ] {
                for (reach, below) in [(1.0, 1.0), (0.3, 0.9), (1e-3, 1e-4), (0.8, 0.0)] {
                    let direct: f64 = (1..=runs)
                        .map(|r| {
                            let before = if la == f64::NEG_INFINITY {
                                0.0
                            } else {
                                (r as f64 * la).exp()
                            };
                            let after = if r == runs {
                                1.0
                            } else {
                                ((runs - r) as f64 * la).exp()
                            };
                            reach * before * (1.0 - after * below)
                        })
                        .sum();
                    let one = la.exp_m1();
                    let every = (runs as f64 * la).exp_m1();
                    let closed = level_pass_uniform(reach, one, every, below, runs);
                    assert!(
                        (closed - direct).abs() <= 1e-12 * (runs as f64) + 1e-9 * direct.abs(),
                        "R={runs} λ={la} reach={reach} below={below}: {closed} vs {direct}"
                    );
                }
            }
        }
    }

    #[test]
    fn rocksdb_like_lsm_shape() {
        let c = eval(&roomy(lsm(10, 1, 1, 10.0)), &workload(all_ops()));
        assert_eq!(c.class, DesignClass::Lsm);
        assert_eq!(c.cold_levels, 0);
        // 1e8 · 128 B / 64 MiB ≈ 190.7 → L = ⌈log10 190.7⌉ = 3
        assert_eq!(c.levels, 3);
        // a lookup that hits costs one data block plus a little filter overhead; a miss costs about R
        assert!(
            c.per_op.lookup > 0.9 && c.per_op.lookup < 1.05,
            "{:?}",
            c.per_op
        );
        assert!((c.per_op.empty_lookup - c.fpr_sum).abs() < 1e-12);
        assert!(c.fpr_sum > 0.005 && c.fpr_sum < 0.03, "R = {}", c.fpr_sum);
        // inserts: about L·(1+T)/B = 3·11/32 ≈ 1 I/O amortised
        assert!(
            c.per_op.insert > 0.5 && c.per_op.insert < 1.5,
            "{}",
            c.per_op.insert
        );
        assert_eq!(c.per_op.blind_update, c.per_op.insert);
        assert!((c.per_op.rmw - c.per_op.lookup - c.per_op.insert).abs() < 1e-12);
        assert!((c.total - c.per_operation * 1e7).abs() < 1e-3);
    }

    #[test]
    fn early_stopping_skewed_reads_cost_less() {
        let mut uni = workload(OperationMix {
            lookup: 1.0,
            ..Default::default()
        });
        uni.reads = KeyDistribution::Uniform { universe: Some(N) };
        uni.writes = KeyDistribution::Uniform { universe: Some(N) };
        let mut skew = uni.clone();
        let hot = KeyDistribution::Skew {
            special_universe: 100_000,
            regular_universe: Some(N),
            probability: 0.9,
        };
        skew.reads = hot.clone();
        skew.writes = hot;
        for d in [lsm(10, 1, 1, 10.0), lsm(4, 3, 3, 5.0), lsm(10, 1, 1, 0.5)] {
            let (u, s) = (eval(&d, &uni).per_op.lookup, eval(&d, &skew).per_op.lookup);
            assert!(s < u, "skewed {s} !< uniform {u}");
        }
    }

    #[test]
    fn infrequent_merging_skewed_writes_cost_less() {
        let mut uni = workload(OperationMix {
            insert: 1.0,
            ..Default::default()
        });
        uni.writes = KeyDistribution::Uniform { universe: Some(N) };
        let mut skew = uni.clone();
        skew.writes = KeyDistribution::Skew {
            special_universe: 10_000,
            regular_universe: Some(N),
            probability: 0.8,
        };
        for d in [lsm(10, 1, 1, 10.0), lsm(4, 3, 3, 5.0)] {
            let (u, s) = (eval(&d, &uni).per_op.insert, eval(&d, &skew).per_op.insert);
            assert!(s < u, "skewed {s} !< uniform {u}");
        }
    }

    #[test]
    fn tiering_cheaper_to_write_dearer_to_read() {
        let w = workload(all_ops());
        for t in [4, 6, 10] {
            let lev = eval(&roomy(lsm(t, 1, 1, 8.0)), &w).per_op;
            let tier = eval(&roomy(lsm(t, t - 1, t - 1, 8.0)), &w).per_op;
            assert!(tier.insert < lev.insert, "T={t}");
            // at T = 4 a tiered level is pushed down at its third run, so it holds one run on average, as a
            // leveled level does: reads cost alike there
            // (a miss costs R on both: the engine sizes a tiered level's compaction outputs' filters for its
            // K runs, so each gets about the level's budget over K while the level holds about half that many
            // on average, and R is priced at 0.70 blocks on the tiered tree at T = 6 and 1.03 at T = 10, against
            // 0.12 and 0.05 on the leveled one; the measured evidence for the cap is one held-out cell's level 2,
            // `a_tiered_levels_filters_are_sized_for_its_run_limit`, not these trees)
            if t >= 6 {
                assert!(tier.lookup > lev.lookup, "T={t}");
                assert!(tier.empty_lookup < 1.5 && lev.empty_lookup < 0.5, "T={t}");
                assert!(tier.empty_lookup > lev.empty_lookup, "T={t}");
                assert!(tier.short_scan > lev.short_scan, "T={t}");
                // with one seek per run, long scans are dearer on a tiered tree too (without, they were equal)
                assert!(tier.long_scan > lev.long_scan, "T={t}");
            }
        }
    }

    #[test]
    fn worst_case_bounds_the_distribution_aware_lookup() {
        let w = workload(all_ops());
        for d in [roomy(lsm(10, 1, 1, 10.0)), roomy(lsm(5, 4, 1, 3.0))] {
            let avg = eval(&d, &w);
            let worst = WorstCase.evaluate(&d, &w).unwrap();
            assert!(avg.per_op.lookup <= worst.per_op.lookup + 1e-9);
            // Table 2's write arithmetic stays within the continuum's bound; our engine's last level, which never
            // empties, costs up to about twice what a level filling from empty costs
            let table2 = eval_with(
                ReferenceQuirks {
                    table2_write_cost: true,
                    ..ReferenceQuirks::NONE
                },
                &d,
                &w,
            );
            assert!(table2.per_op.insert <= worst.per_op.insert * 1.5);
            assert!(
                avg.per_op.insert <= worst.per_op.insert * 3.0,
                "{} against {}",
                avg.per_op.insert,
                worst.per_op.insert
            );
        }
    }

    #[test]
    fn cold_levels_from_fence_memory_make_a_hybrid() {
        let mut d = lsm(10, 1, 1, 10.0);
        d.fence_bytes /= 20; // fences for the top levels only
        let c = eval(&d, &workload(all_ops()));
        assert!(c.cold_levels >= 1);
        assert_eq!(c.class, DesignClass::Hybrid);
        // a miss now pays one I/O per cold run
        assert!(c.per_op.empty_lookup >= c.cold_levels as f64);
    }

    #[test]
    fn btree_like_design() {
        let mut d = Design::wiredtiger_like(64 << 20, 1 << 20);
        d.block_bytes = 32 * 1024; // B = 256 entries ≥ T = 32
        let c = eval(&d, &workload(all_ops()));
        assert_eq!(c.class, DesignClass::Btree);
        assert!(c.cold_levels >= 1);
        // our engine writes out of place: a blind update is an insert (the reference code: an in-place leaf
        // write after a lookup)
        assert_eq!(c.per_op.blind_update, c.per_op.insert);
        let r = DistributionAware::reference()
            .evaluate(&d, &workload(all_ops()))
            .unwrap();
        assert_eq!(r.per_op.blind_update, r.per_op.lookup + 1.0 / 256.0);
        // a range scan seeks into every level (one run each: its data block, and its index block when cold)
        // and reads s/B blocks; the first cold level keeps what M_FP has left of its fences, so at most one
        // index block fewer
        let expected = c.levels as f64 + c.cold_levels as f64 + 1000.0 / 256.0;
        assert!(
            c.per_op.long_scan <= expected + 1e-9 && c.per_op.long_scan >= expected - 1.0,
            "{} against {expected}",
            c.per_op.long_scan
        );
        // the reference layout: internal levels hold no data, and the leaves are read from the last level only
        let q = ReferenceQuirks {
            scan_full_levels: true,
            cold_levels_hold_no_data: true,
            ..ReferenceQuirks::NONE
        };
        let r = eval_with(q, &d, &workload(all_ops()));
        assert!((r.per_op.long_scan - (r.cold_levels as f64 - 1.0 + 1000.0 / 256.0)).abs() < 1e-9);
    }

    /// A write buffer and levels under uniform updates over `universe` keys (a closed key space: the store
    /// stays the same size, every write an update).
    fn updates_over(universe: u64) -> Workload {
        let mut w = workload(OperationMix {
            lookup: 0.5,
            blind_update: 0.5,
            ..OperationMix::default()
        });
        w.entries = universe;
        w.writes = KeyDistribution::Uniform {
            universe: Some(universe),
        };
        w.reads = w.writes.clone();
        w
    }

    #[test]
    fn the_last_level_never_empties_so_each_arrival_rewrites_it() {
        // leveling, T = 10: under updates the last level holds the whole key space at every merge into it,
        // while Table 2 prices every level as filling from empty ((1 + T)/B an entry at most)
        let d = lsm(10, 1, 1, 10.0);
        let w = updates_over(N);
        let fixed = eval(&d, &w);
        let table2 = eval_with(
            ReferenceQuirks {
                table2_write_cost: true,
                ..ReferenceQuirks::NONE
            },
            &d,
            &w,
        );
        let l = fixed.levels as f64;
        let b = (4096.0f64 / 128.0).floor();
        assert!(table2.per_op.insert <= l * 11.0 / b + 1e-9);
        // the last level alone: about 2·T entries read and written for each entry arriving, at least as much
        // as Table 2 charges the whole tree
        assert!(
            fixed.per_op.insert > table2.per_op.insert,
            "{} against {}",
            fixed.per_op.insert,
            table2.per_op.insert
        );
        assert!(fixed.per_op.insert < 4.0 * l * 11.0 / b);
    }

    #[test]
    fn cold_levels_merge_like_hot_ones() {
        // K = Z: the runs a level may hold do not depend on whether its fences are in memory, so neither do
        // its merges (Table 2 writes a cold level in place, a block per entry)
        let mut hot = lsm(8, 3, 3, 10.0);
        hot.fence_bytes *= 4;
        let w = updates_over(N);
        let all = eval(&hot, &w);
        assert_eq!(all.cold_levels, 0);
        let mut cold = hot.clone();
        cold.fence_bytes = hot.fence_bytes / 80;
        let c = eval(&cold, &w);
        assert!(c.cold_levels >= 1, "{}", c.cold_levels);
        let h = all;
        assert_eq!(c.levels, h.levels);
        assert!(
            (c.per_op.insert - h.per_op.insert).abs() < 1e-9 * h.per_op.insert,
            "{} against {}",
            c.per_op.insert,
            h.per_op.insert
        );
    }

    #[test]
    fn a_tiered_level_writes_and_reads_each_entry_once() {
        // T = 8, K = Z = 7, inserts of new keys: each level writes an arriving entry once and reads it once
        // when pushed down; the last level, holding fewer than Z runs, only writes it
        let d = lsm(8, 7, 7, 10.0);
        let mut w = workload(OperationMix {
            insert: 1.0,
            ..OperationMix::default()
        });
        w.writes = KeyDistribution::uniform();
        // 40M entries: the last level (134M entries at θ) holds a few pushes of 12.8M, fewer than Z
        w.entries = 40_000_000;
        let c = eval(&d, &w);
        let b = (4096.0f64 / 128.0).floor();
        let l = c.levels as f64;
        assert!(l >= 2.0);
        assert!(
            (c.per_op.insert - (2.0 * (l - 1.0) + 1.0) / b).abs() < 0.05 / b,
            "{} for {l} levels",
            c.per_op.insert
        );
    }

    #[test]
    fn an_lsh_log_pays_its_pushes_once_it_merges() {
        // T = 20 over 100 buffers of keys, updated ten times over: the first level is pushed down at its 19th
        // run, reading its runs and writing their distinct keys (17 buffers' worth: 19 buffers of uniform
        // updates over 100); the second level (400 buffers) keeps the merged run and the 18 newest pushes, 411
        // buffers' worth, and so is pushed into a third. With T = 1000 the log never fills and a write costs
        // its flush only
        let mut d = Design::lsh_like(1 << 20, 1 << 20);
        // (a flush's entries as the hash-log buffer holds them, 16-byte keys and 112-byte values)
        let eb = cosine_design::shape::hash_log_flush_entries(d.flush_bytes() as usize, 16, 112);
        let entries = 100.0 * eb as f64;
        let mut w = updates_over(entries as u64);
        w.operations = 10 * entries as u64;
        let b = (d.block_bytes as f64 / 128.0).floor();
        d.size_ratio = 1000;
        d.hot_runs = 999;
        d.cold_runs = 999;
        let never = eval(&d, &w);
        assert_eq!(never.class, DesignClass::Lsh);
        assert!(never.per_op.blind_update <= 1.0 / b + 1e-12);
        d.size_ratio = 20;
        d.hot_runs = 19;
        d.cold_runs = 19;
        let merging = eval(&d, &w);
        assert_eq!(merging.class, DesignClass::Lsh);
        assert_eq!((never.levels, merging.levels), (1, 2));
        // the flush (1/B), the first level's pushes every 19 flushes (its runs read, 17 buffers of distinct
        // keys written: 1.9/B), and the second level, which holds its 19 runs below its capacity (the planner
        // weighs a level by its files' bytes, which a flush's entries fill to about two thirds of the
        // buffer's charge for them) and so merges its oldest two, the run of all 100 buffers of keys among
        // them, on each push: (100 + 17) read and written per 19 flushes, 12.3/B
        assert!(
            merging.per_op.blind_update > 14.0 / b && merging.per_op.blind_update <= 16.5 / b,
            "{} against {} (B = {b})",
            merging.per_op.blind_update,
            never.per_op.blind_update
        );
    }

    #[test]
    fn a_one_level_log_at_its_run_limit_merges_its_oldest_run_on_each_flush() {
        // `cosine validate --held-out --seed 11`'s random #10 (an append-only log, T = 1000, K = Z = 999,
        // 629,145 bytes of buffer) under YCSB-B over 30,000 records: its 300,000 warm-up writes fill the one
        // level's 999 runs (275 entries a flush, as the hash-log buffer charges them), which then merges its
        // two oldest, the growing run of its oldest entries among them, on each flush until its files'
        // bytes reach its capacity: 1.72 blocks a write measured (at 834b39e). The write price as validate
        // takes it, the mean over 32 stretches of the warm-up
        let mut d = Design::lsh_like(629_145, 419_431);
        d.log = LogKind::AppendOnly;
        d.block_bytes = 4096;
        d.file_bytes = 64 << 20;
        let mut w = Workload::with_mix(OperationMix {
            lookup: 0.95,
            blind_update: 0.05,
            ..OperationMix::default()
        });
        w.reads = KeyDistribution::Zipfian {
            theta: 0.99,
            universe: Some(30_000),
            items: Some(10_000_000_000),
        };
        w.writes = w.reads.clone();
        (w.entries, w.key_bytes, w.value_bytes) = (30_000, 23, 1000);
        let price = |q: ReferenceQuirks| {
            let all = 300_263.0;
            (0..32)
                .map(|i| {
                    let mut at = w.clone();
                    at.operations_before = (all * i as f64 / 32.0 / 0.05) as u64;
                    at.operations = (all / 32.0 / 0.05) as u64;
                    eval_with(q, &d, &at).per_op.blind_update
                })
                .sum::<f64>()
                / 32.0
        };
        let charged = price(ReferenceQuirks::NONE);
        assert_eq!(eval(&d, &w).class, DesignClass::Lsh);
        assert!(
            (charged - 1.72).abs() < 0.25 * 1.72,
            "{charged} against 1.72 measured"
        );
        let by_payload = price(ReferenceQuirks {
            lsh_entries_by_payload: true,
            ..ReferenceQuirks::NONE
        });
        assert!(
            by_payload < 0.3,
            "{by_payload}: the level never reaches its run limit"
        );
    }

    /// YCSB-A as `cosine validate` prices it at 30,000 records after 300,000 writes (23-byte keys, 1,000-byte
    /// values, zipfian ranks drawn over 10^10 items and hashed onto the records), and the search's LSH design
    /// for it at 1 MiB (its size ratio left to the caller).
    fn validated_lsh() -> (Workload, Design) {
        let mut w = updates_over(30_000);
        w.key_bytes = 23;
        w.value_bytes = 1000;
        w.writes = KeyDistribution::Zipfian {
            theta: 0.99,
            universe: Some(30_000),
            items: Some(10_000_000_000),
        };
        w.reads = w.writes.clone();
        w.operations = 600_000;
        let mut d = Design::lsh_like(652_576, 396_000);
        d.block_bytes = 4096;
        (w, d)
    }

    /// YCSB-A over `records` keys after `writes` updates, as `cosine validate` prices it, and the hybrid
    /// design of filters over a tiered cold level (K = 1, Z = T − 1, full compaction on the first two
    /// levels) that the search picks for it, with `buffer`, `filters` and `fences` bytes.
    fn validated_hybrid(
        records: u64,
        writes: u64,
        t: u64,
        buffer: u64,
        filters: u64,
        fences: u64,
    ) -> (Workload, Design) {
        let (mut w, _) = validated_lsh();
        w.entries = records;
        w.writes = KeyDistribution::Zipfian {
            theta: 0.99,
            universe: Some(records),
            items: Some(10_000_000_000),
        };
        w.reads = w.writes.clone();
        w.operations = 2 * writes;
        let mut d = Design::rocksdb_like(buffer, filters, fences);
        d.block_bytes = 4096;
        d.size_ratio = t;
        d.hot_runs = 1;
        d.cold_runs = t - 1;
        d.compaction = Compaction::Hybrid;
        d.full_compaction_levels = 2;
        (w, d)
    }

    #[test]
    fn a_tiered_level_that_outgrows_its_fences_late_in_its_cycle_is_priced_over_the_cycle() {
        // Held-out seed 37's 4 MiB YCSB-B pick (T = 32, K = Z = 31, 60,000 records, 600,000 zipfian updates
        // since the load, M_B 288 KiB, M_BF 296 KiB, M_FP 645 KiB): level 2 fits about 15.5 runs' fences and
        // holds 0..30 runs over its cycle. Its mean, 15 runs, all fit; the engine read 1.09-1.29 blocks a
        // lookup at 2-16 runs there and 5.0-6.7 at 24-29 (2.78 over eight points of the cycle).
        let (mut w, mut d) = validated_hybrid(60_000, 600_000, 32, 294_912, 303_380, 660_000);
        w.mix = OperationMix {
            lookup: 0.95,
            blind_update: 0.05,
            ..OperationMix::default()
        };
        w.operations = 600_000 * 20;
        d.hot_runs = 31;
        d.cold_runs = 31;
        d.compaction = Compaction::Full;
        d.run_strategy = RunStrategy::First;
        d.file_bytes = 4 << 20;
        let model = DistributionAware::new();
        let keys = KeySpace::from_workload(&w);
        let shape = data_shape(&d, &w, &keys, &model.quirks);
        let (tree, stored, filters, fences) = model.shaped_tree(&d, &w, &shape, &keys.parts_cow());
        assert_eq!(
            (tree.cycle[2], tree.runs[2], tree.resident[2]),
            (31.0, 15.0, 15.0)
        );
        let phases = cycle_phases(&tree, None, fences, filters, &stored, &model.quirks, true);
        // level 2's cycle: the runs that all fit (0..=15), and the two halves past them (16..=22, 23..=30)
        let runs: Vec<f64> = phases
            .iter()
            .map(|(_, t)| (t.runs[2] * 100.0).round() / 100.0)
            .collect();
        let weights: Vec<f64> = phases.iter().map(|(w, _)| (w * 31.0).round()).collect();
        assert_eq!(
            (runs, weights),
            (vec![7.5, 19.0, 26.5], vec![16.0, 7.0, 8.0])
        );
        let (full, past) = (&phases[0].1, &phases[2].1);
        assert!(full.resident[2] >= full.runs[2], "{:?}", full.resident);
        assert!(
            past.resident[2] < past.runs[2] - 10.0,
            "{:?}",
            past.resident
        );
        // priced over the cycle, within the engine's 2.78 blocks a lookup by a fifth; at the cycle's mean it
        // was 1.12
        let lookup = model.evaluate(&d, &w).unwrap().per_op.lookup;
        assert!((2.2..=3.3).contains(&lookup), "{lookup}");
        // a level whose every point fits keeps the mean's price: twice the fence memory
        let mut roomy = d.clone();
        roomy.fence_bytes *= 2;
        let shape = data_shape(&roomy, &w, &keys, &model.quirks);
        let (tree, stored, filters, fences) =
            model.shaped_tree(&roomy, &w, &shape, &keys.parts_cow());
        let phases = cycle_phases(&tree, None, fences, filters, &stored, &model.quirks, true);
        assert!(phases.is_empty());
        // and a workload that does not write meets the load's tree, which does not cycle
        let (tree, stored, filters, fences) = model.shaped_tree(&d, &w, &shape, &keys.parts_cow());
        let phases = cycle_phases(&tree, None, fences, filters, &stored, &model.quirks, false);
        assert!(phases.is_empty());
    }

    /// Per level above the last, the share of the flushes of the planner's simulation under `w`'s writes
    /// after which it held 0, 1, .. runs (the simulation `evaluate` prices `d` over).
    fn simulated_run_counts(d: &Design, w: &Workload) -> Vec<Vec<f64>> {
        let model = DistributionAware::new();
        let keys = KeySpace::from_workload(w);
        let shape = data_shape(d, w, &keys, &model.quirks);
        let met = model.met_tree(d, w, &shape, &keys.parts_cow());
        met.under_writes
            .expect("the simulation runs")
            .run_counts
            .clone()
    }

    #[test]
    fn the_phase_the_operations_meet_moves_with_the_files_filter_bits() {
        // T = 18, K = 13 over 100 million entries, 10 million operations after the load: the planner's
        // simulation runs (381 flushes of 262,144 entries, and 38 more), and its run files carry their filters,
        // so 2.3 bits a key instead of 2 make them larger and level 2 is met holding one run more (2.15 on
        // average over the operations' window instead of 1.15): a lookup is priced 1.50 -> 1.67 blocks, an
        // 11% rise with more filter memory. A sweep of 3,024 designs (T 2-19, six K, seven bit counts, four
        // steps) found 8 such rises, all where the simulation runs; the steady state's price rose in none, and
        // the proptest of that monotonicity checks the steady state.
        let w = workload(all_ops());
        let runs =
            |bits: f64| explain_with(ReferenceQuirks::NONE, &lsm(18, 13, 1, bits), &w)[1].runs;
        let (fewer, more) = (runs(2.0), runs(2.3));
        assert!((more - fewer - 1.0).abs() < 0.05, "{fewer} {more}");
        let steady = ReferenceQuirks {
            nominal_loaded_tree: true,
            ..ReferenceQuirks::NONE
        };
        let price =
            |q: ReferenceQuirks, bits: f64| eval_with(q, &lsm(18, 13, 1, bits), &w).per_op.lookup;
        assert!(price(ReferenceQuirks::NONE, 2.3) > price(ReferenceQuirks::NONE, 2.0));
        assert!(price(steady, 2.3) <= price(steady, 2.0));
    }

    fn explain_with(quirks: ReferenceQuirks, d: &Design, w: &Workload) -> Vec<ModelLevel> {
        DistributionAware {
            quirks,
            ..Default::default()
        }
        .explain(d, w)
        .unwrap()
        .expect("a tree-shaped design")
    }

    #[test]
    fn a_leveled_level_its_keys_cannot_fill_keeps_every_key_written() {
        // A development cell of `cosine validate --held-out` (seed 2, the search's 2 MiB pick over 20,000
        // records, T = 32): level 1 holds 32 flushes of 867 entries, more than the 20,000 keys, so it is never
        // pushed down and the engine's level 1 held 19,972 keys after 200,000 updates; lookups end there
        // (0.88 blocks measured, 0.83 priced; 1.29 priced as a half-full level 1 above the versions below).
        let (w, d) = validated_hybrid(20_000, 200_000, 32, 1_815_347, 61_805, 220_000);
        let fixed = explain_with(ReferenceQuirks::NONE, &d, &w);
        // (one run after 95% of the flushes the planner's simulation makes; in a rare stretch it gathers
        // up to 31 there, which lifts the mean the lookups are priced over to about 2.2)
        let level1 = &simulated_run_counts(&d, &w)[0];
        assert!(level1[1] > 0.95, "{level1:?}");
        assert!(fixed[0].entries_per_run > 19_000.0, "{fixed:?}");
        let filling = ReferenceQuirks {
            levels_always_fill: true,
            ..ReferenceQuirks::NONE
        };
        let half = explain_with(filling, &d, &w);
        assert!(half[0].entries_per_run < 15_000.0, "{half:?}");
        let lookup = eval(&d, &w).per_op.lookup;
        let quirked = eval_with(filling, &d, &w).per_op.lookup;
        assert!(lookup < 0.9 * quirked, "{lookup} {quirked}");
        // each flush rewrites the level: on average over the writes it holds the distinct keys of a share of
        // them, which skewed writes reach early, well above half of all of theirs (the development sets
        // measured 5.2-5.9 blocks a write on the search's design; 6.8 priced so, 4.7 as half)
        // (in closed form: the planner's simulation under the writes, which prices this design's writes
        // where it runs, is left out)
        let closed = ReferenceQuirks {
            nominal_loaded_tree: true,
            ..ReferenceQuirks::NONE
        };
        let write = eval_with(closed, &d, &w).per_op.blind_update;
        let half = eval_with(
            ReferenceQuirks {
                levels_always_fill: true,
                ..closed
            },
            &d,
            &w,
        )
        .per_op
        .blind_update;
        assert!(write > 1.2 * half, "{write} {half}");
    }

    #[test]
    fn a_filling_level_holds_the_mean_of_its_keys_over_the_writes_priced() {
        // The development cell above: zipfian writes over 20,000 keys. The mean over all the writes is the
        // mean of the means over stretches that tile them, a stretch of no length is the keys at its point,
        // and a later stretch holds more keys than an earlier one of the same length.
        let (w, _) = validated_hybrid(20_000, 200_000, 32, 1_815_347, 61_805, 220_000);
        let keys = KeySpace::from_workload(&w);
        let parts = keys.parts();
        let all = 400_000.0;
        let whole = mean_distinct(&parts, 0.0, all);
        let quarters: Vec<f64> = (0..4)
            .map(|i| mean_distinct(&parts, all * i as f64 / 4.0, all * (i + 1) as f64 / 4.0))
            .collect();
        let tiled = quarters.iter().sum::<f64>() / 4.0;
        assert!((tiled - whole).abs() < 0.01 * whole, "{whole} {quarters:?}");
        assert!(quarters.windows(2).all(|q| q[1] > q[0]), "{quarters:?}");
        assert_eq!(
            mean_distinct(&parts, 1000.0, 1000.0),
            distinct_after(&parts, 1000.0)
        );
        assert_eq!(mean_distinct(&parts, 0.0, 0.0), 0.0);
        // the model's write price follows: over the last quarter of the writes it is above the price over all
        // of them from the load (the level it rewrites has grown), and from the load it is what it was
        // before χ₀ existed
        let (mut w, d) = validated_hybrid(20_000, 200_000, 32, 1_815_347, 61_805, 220_000);
        let from_load = eval(&d, &w).per_op.blind_update;
        let total = w.operations;
        w.operations_before = total * 3 / 4;
        w.operations = total / 4;
        let late = eval(&d, &w).per_op.blind_update;
        assert!(late > from_load, "{late} {from_load}");
    }

    #[test]
    fn the_last_hot_level_holds_k_runs_above_cold_ones() {
        // A development cell (seed 2, the search's 8 MiB pick over 40,000 records, T = 16): M_FP holds level
        // 1's fences, not level 2's versions, so Y = 1. The engine runs its hot level 1 leveled (K = 1): one
        // run of 655 entries, level 2 four runs. Table 2 gives the last hot level Z runs: 6 runs of a flush
        // each, priced at 2.58 blocks a lookup against 0.94 measured (0.89 priced now).
        let (w, d) = validated_hybrid(40_000, 400_000, 16, 6_165_627, 105_260, 440_000);
        let fixed = explain_with(ReferenceQuirks::NONE, &d, &w);
        assert_eq!(fixed.len(), 2);
        assert!(fixed[0].hot && !fixed[1].hot, "{fixed:?}");
        // (one run after 97% of the flushes the planner's simulation makes)
        let level1 = &simulated_run_counts(&d, &w)[0];
        assert!(level1[1] > 0.95, "{level1:?}");
        let table2 = explain_with(
            ReferenceQuirks {
                last_hot_level_holds_z: true,
                ..ReferenceQuirks::NONE
            },
            &d,
            &w,
        );
        assert!(table2[0].runs > 3.0, "{table2:?}");
    }

    #[test]
    fn a_run_holds_the_keys_of_more_writes_than_its_entries_under_skew() {
        // Under zipfian updates a run of n distinct keys gathered more than n writes, so the hot keys are in
        // the newest runs more often than n writes would put them there: the same tree, priced lookups lower.
        let (w, mut d) = validated_hybrid(40_000, 400_000, 32, 1_380_188, 67_249, 440_000);
        d.hot_runs = 31;
        let fixed = eval(&d, &w).per_op.lookup;
        let as_entries = eval_with(
            ReferenceQuirks {
                entries_as_writes: true,
                ..ReferenceQuirks::NONE
            },
            &d,
            &w,
        )
        .per_op
        .lookup;
        assert!(fixed < 0.9 * as_entries, "{fixed} {as_entries}");
        // uniform writes: α of the linear form counts a run's distinct keys, whatever writes gathered them (a
        // key space small enough that the runs hold a real share of it, where the two differ)
        let mut u = w.clone();
        u.entries = 100_000;
        u.writes = KeyDistribution::Uniform {
            universe: Some(100_000),
        };
        u.reads = u.writes.clone();
        d.size_ratio = 10;
        d.hot_runs = 9;
        d.cold_runs = 9;
        let fixed = eval(&d, &u).per_op.lookup;
        let as_entries = eval_with(
            ReferenceQuirks {
                entries_as_writes: true,
                ..ReferenceQuirks::NONE
            },
            &d,
            &u,
        )
        .per_op
        .lookup;
        assert!(
            (fixed - as_entries).abs() < 0.02 * as_entries,
            "{fixed} {as_entries}"
        );
    }

    #[test]
    fn a_tiered_level_under_partial_compaction_spans_the_key_space() {
        // A development cell (seed 2, random #26): a B-tree-like design, T = 3, K = Z = 2, partial compaction,
        // on YCSB-B over 20,000 records. Its upper levels hold one flush or push on average, each a whole run:
        // every lookup that passes a level reads one of its blocks (3.68 blocks a lookup measured by a free
        // writer; 1.10 priced when a single run was taken to hold only the key ranges partial compaction had not
        // pushed down).
        let (mut w, mut d) = validated_hybrid(20_000, 10_000, 3, 398_458, 0, 1_698_694);
        w.mix = OperationMix {
            lookup: 0.95,
            blind_update: 0.05,
            ..OperationMix::default()
        };
        d.filter_bytes = 0;
        d.class = Some(DesignClass::Btree);
        d.hot_runs = 2;
        d.cold_runs = 2;
        d.compaction = Compaction::Partial;
        let fixed = eval(&d, &w).per_op.lookup;
        // (the quirk's levels that do not span the key space are priced without the planner's simulation
        // under the writes, which would give them the share the planner leaves them)
        let quirked = eval_with(
            ReferenceQuirks {
                tiered_levels_span_only_with_runs: true,
                nominal_loaded_tree: true,
                ..ReferenceQuirks::NONE
            },
            &d,
            &w,
        )
        .per_op
        .lookup;
        // (measured paced, each flush merged before the next: 3.25 blocks a lookup, 3.20 with the found counters;
        // 3.09 priced now, its upper levels holding half a run on average over their fill cycles, and its last
        // level an arrival above the run holding every key; 4.14 before those two)
        assert!(
            (fixed - 3.25).abs() < 0.1 * 3.25 && quirked < 0.6 * fixed,
            "{fixed} {quirked}"
        );
    }

    #[test]
    fn a_tiered_lsh_levels_pushes_lie_above_its_merged_run_and_go_cold() {
        // The search's LSH design for YCSB-A at 1 MiB and 30,000 records, at T = 24: the last level keeps the
        // merged run and its 22 newest pushes (Z = 23), whose hash indexes M_FP cannot hold, so a lookup of a
        // key not updated lately reads the on-disk index of each (and the block it names). With Z = 1 each push
        // merges into the one run. Measured (cosine validate --design, 300,000 writes of warm-up): 3.68 and
        // 0.89 blocks a lookup; the model priced both at 0.85 before it laid out the last level's runs.
        let (w, mut d) = validated_lsh();
        d.size_ratio = 24;
        d.hot_runs = 23;
        d.cold_runs = 23;
        let tiered = eval(&d, &w).per_op.lookup;
        d.cold_runs = 1;
        let leveled = eval(&d, &w).per_op.lookup;
        assert!((0.8..1.0).contains(&leveled), "{leveled}");
        assert!(tiered > 3.0 * leveled, "{tiered} against {leveled}");
    }

    #[test]
    fn an_lsh_designs_cold_probes_in_closed_form_are_the_integral() {
        // the cold-run integral in closed form (`keys::not_written_integral`) against a fine midpoint rule over
        // the same runs
        let (w, mut d) = validated_lsh();
        for (t, z) in [(24, 23), (24, 1), (6, 5), (95, 94)] {
            (d.size_ratio, d.hot_runs, d.cold_runs) = (t, t - 1, z);
            let keys = KeySpace::from_workload(&w);
            let shape = data_shape(&d, &w, &keys, &ReferenceQuirks::NONE);
            let eb = d.flush_bytes() as f64 / shape.entry_bytes;
            let parts = keys.parts();
            let ages = LshAges::new(&d, &w, &shape, &parts, eb, (t - 1) as f64);
            assert!(ages.unmerged.is_none(), "T = {t}: {ages:?}");
            for part in &parts {
                let closed = ages.cold_probes(part);
                let kept = ages.kept;
                let older = |y: f64| 1.0 - KeySpace::alpha(part, y / kept);
                let fine = |a: f64, b: f64| {
                    let steps = 20_000;
                    let h = (b - a).max(0.0) / steps as f64;
                    (0..steps)
                        .map(|i| older(a + h * (i as f64 + 0.5)))
                        .sum::<f64>()
                        * h
                };
                let numeric = ages.probes_merged(older, fine, true);
                assert!(
                    (closed - numeric).abs() <= 1e-6 * numeric.abs().max(1e-3),
                    "T = {t}, Z = {z}, {part:?}: {closed} against {numeric}"
                );
            }
        }
    }

    #[test]
    fn an_lsh_first_level_fills_and_empties_where_the_planner_pushes_it() {
        // Where the first level is in its cycle after x entries flushed (what a stretch of operations shorter
        // than a cycle meets: the validation's slices), against the engine's planner run flush by flush on the
        // tree's shape: T = 100 (K = 99), runs of one hash-log flush each. While the first level is the only
        // one it is the last, which keeps Z runs (merging its two oldest on each flush past Z) and is pushed
        // down by bytes, at its capacity (about 109 flushes here, a flush's run file being smaller than
        // M_B/2); after that at its K-th run. Seed 13's random #15 (T = 1000, YCSB-A, 300,000 writes of
        // warm-up) measured 18.7 blocks a lookup: its slices met the first level just before and after its
        // first push; priced over a whole cycle it was 29.9, over the cycle's points the slices meet 19.5.
        // The cycle is the engine's whatever the operations priced write: a short workload (here 2,000
        // operations after 30,000, fewer entries than K runs hold) still meets the runs the load's flushes
        // left.
        for (z, operations) in [(99, 600_000), (99, 2_000), (10, 2_000)] {
            let (mut w, mut d) = validated_lsh();
            (d.size_ratio, d.hot_runs, d.cold_runs) = (100, 99, z);
            w.operations = operations;
            if operations < 10_000 {
                w.operations_before = 30_000;
            }
            let keys = KeySpace::from_workload(&w);
            let parts = keys.parts();
            let shape = data_shape(&d, &w, &keys, &ReferenceQuirks::NONE);
            let eb =
                cosine_design::shape::hash_log_flush_entries(d.flush_bytes() as usize, 23, 1000)
                    as f64;
            let mut ages = LshAges::new(&d, &w, &shape, &parts, eb, 99.0);
            assert_eq!(ages.cap, 98.0 * eb);
            if operations < 10_000 {
                assert!(ages.cycle < 60.0 * eb, "{}", ages.cycle / eb);
            }
            let mut sim = PlannerFlushes::new(&d, eb);
            let mut pushes = Vec::new();
            for f in 1..=420usize {
                let levels = sim.flush();
                // (a push takes all the first level's runs down)
                if levels[0].is_empty() {
                    pushes.push(f);
                }
                // (before the first push the first level is the last: the model counts the runs above its
                // merged one)
                let planner = levels[0].len() as f64;
                let x = f as f64 * eb;
                let merged = if x < ages.first_push { 1.0 } else { 0.0 };
                let model = ages.fill_at(x) / eb + merged;
                assert!(
                    (planner - model).abs() <= 1.5,
                    "Z = {z}, after {f} flushes: {planner} runs, priced {model} (pushes at {pushes:?})"
                );
            }
            assert_eq!(pushes.len(), 4, "Z = {z}: {pushes:?}");
            // a short stretch meets the first level where it is in its cycle (widened by 5% of the entries
            // flushed either side: about 6.5 runs here); a long run meets half a cycle
            let push = ages.first_push;
            ages.flushed = (push + 20.0 * eb, push + 30.0 * eb);
            let runs = ages.first_level() / eb;
            assert!((runs - 25.0).abs() < 1.0, "Z = {z}: {runs}");
            if operations > 10_000 {
                ages.flushed = (0.0, 100.0 * ages.period());
                assert!((ages.first_level() - 49.0 * eb).abs() < 0.5 * eb);
            }
        }
    }

    /// The engine's planner fed one flush of `eb` entries (23-byte keys, 1,000-byte values) at a time, every
    /// plan carried out on the shapes before the next flush.
    struct PlannerFlushes {
        levels: Vec<cosine_design::planner::LevelView>,
        ids: cosine_design::simulate::Ids,
        cut: cosine_design::simulate::Files,
        run_bytes: u64,
        policy: cosine_design::planner::Policy,
    }

    impl PlannerFlushes {
        fn new(d: &Design, eb: f64) -> Self {
            let sizes = crate::loaded::Sizes::of(23, 1000, d.block_bytes as usize);
            PlannerFlushes {
                levels: vec![Vec::new()],
                ids: cosine_design::simulate::Ids::default(),
                cut: cosine_design::simulate::Files {
                    data_bytes: d.file_bytes,
                    overhead: sizes.file_overhead,
                },
                run_bytes: (eb * sizes.disk_entry).round() as u64,
                policy: cosine_design::planner::Policy::of(d, usize::MAX),
            }
        }

        /// One flush and the compactions it sets off: the levels after them.
        fn flush(&mut self) -> &[cosine_design::planner::LevelView] {
            let run = cosine_design::simulate::run_over(
                &mut self.ids,
                self.run_bytes,
                0,
                u64::MAX,
                self.cut,
            );
            self.levels[0].insert(0, run);
            loop {
                let p = cosine_design::planner::plan(&self.levels, &self.policy);
                if p == cosine_design::planner::Plan::Nothing {
                    return &self.levels;
                }
                self.levels =
                    cosine_design::simulate::apply(&p, &self.levels, self.cut, &mut self.ids);
            }
        }
    }

    #[test]
    fn an_lsh_level_between_that_outgrows_its_indexes_late_in_its_cycle_is_priced_over_the_cycle() {
        // The search's 1 MiB/30k pick for YCSB-A (seeds 29, 31, 37, 41: T = 17, K = Z = 16, M_B 535 KiB,
        // M_FP 387 KiB, 30,000 records after 300,000 zipfian updates): level 2 lies between the first and the
        // last and holds 0..15 runs over its cycle, and M_FP keeps the hash indexes of about 10 of them. The
        // engine read 1.05-1.33 blocks a lookup with them all resident and 2.8-3.3 with 13-14 runs there (1.72
        // over eight points of the cycle); the mean, 7.5 runs all resident, priced 1.27.
        let (mut w, mut d) = validated_lsh();
        (d.size_ratio, d.hot_runs, d.cold_runs) = (17, 16, 16);
        (d.buffer_bytes, d.cache_bytes, d.fence_bytes) = (547_719, 104_857, 396_000);
        d.compaction = Compaction::Partial;
        d.file_bytes = 4 << 20;
        w.mix = OperationMix {
            lookup: 0.5,
            blind_update: 0.5,
            ..OperationMix::default()
        };
        w.operations = 600_000;
        let keys = KeySpace::from_workload(&w);
        let parts = keys.parts();
        let shape = data_shape(&d, &w, &keys, &ReferenceQuirks::NONE);
        let eb =
            cosine_design::shape::hash_log_flush_entries(d.flush_bytes() as usize, 23, 1000) as f64;
        let ages = LshAges::new(&d, &w, &shape, &parts, eb, 16.0);
        assert_eq!(ages.levels, 3, "{ages:?}");
        assert_eq!(
            (ages.segments[0].count, ages.segments[0].cycles_at),
            (7.5, 16.0)
        );
        let phases = ages.middle_phases();
        assert_eq!(phases.len(), 3, "{phases:?}");
        // (the stretches' weights sum to 1 and their runs average to the cycle's mean; the last stretch
        // holds runs past the fit)
        let weight: f64 = phases.iter().map(|(w, _)| w).sum();
        let runs: f64 = phases.iter().map(|(w, a)| w * a.segments[0].count).sum();
        assert!(
            (weight - 1.0).abs() < 1e-9 && (runs - 7.5).abs() < 1e-9,
            "{weight} {runs}"
        );
        // (over the key space's partitions, as lookups draw them)
        let mean: f64 = parts.iter().map(|p| p.get * ages.cold_probes(p)).sum();
        let over: f64 = parts
            .iter()
            .map(|p| p.get * ages.over_phases(|a| a.cold_probes(p)))
            .sum();
        assert!(over > mean + 0.1, "{over} {mean}");
        let lookup = DistributionAware::new()
            .evaluate(&d, &w)
            .unwrap()
            .per_op
            .lookup;
        assert!((1.45..=2.0).contains(&lookup), "{lookup}");
        // with twice the fence memory every point of the cycle fits: the mean prices it
        d.fence_bytes *= 2;
        let ages = LshAges::new(&d, &w, &shape, &parts, eb, 16.0);
        assert!(ages.middle_phases().is_empty());
    }

    #[test]
    fn an_lsh_last_level_keeps_the_loads_runs_as_the_planner_does() {
        // The load's records are flushed as the writes are: a last level that keeps Z runs holds them as runs of
        // K flushes each until it holds more than Z, and only then merges its oldest. Seeds 29 and 31 picked
        // T = 17, K = Z = 16 for YCSB-D at 1 MiB over 30,000 records; the engine's level 2 held 16 runs of
        // about 3,640 entries at the run's end, 8 of them cold, and a lookup read 0.75 blocks. Priced with the
        // load as one merged run below the writes' runs, a lookup passed no cold run to reach a loaded key and
        // read 0.51. The runs the model counts below the first level against the planner run flush by flush,
        // before the last level fills: right after the load, and after as many writes again. (Long after, the
        // planner's runs, which keep every byte they merge, push the level down by bytes where the engine's
        // merges keep one version of a key: this simulation cannot say what the engine holds there.)
        for (before, writes) in [(0u64, 5_000u64), (30_000, 5_000)] {
            let (mut w, mut d) = validated_lsh();
            (d.size_ratio, d.hot_runs, d.cold_runs) = (17, 16, 16);
            (w.operations_before, w.operations) = (before, writes);
            let keys = KeySpace::from_workload(&w);
            let parts = keys.parts();
            let shape = data_shape(&d, &w, &keys, &ReferenceQuirks::NONE);
            let eb =
                cosine_design::shape::hash_log_flush_entries(d.flush_bytes() as usize, 23, 1000)
                    as f64;
            let ages = LshAges::new(&d, &w, &shape, &parts, eb, 16.0);
            assert!(ages.unmerged.is_none() && ages.levels == 2, "{ages:?}");
            let mut sim = PlannerFlushes::new(&d, eb);
            // the flushes of the operations priced, their last K (a first level's cycle) sampled: the model
            // prices the runs below the first level as a mean over them
            let flushes = (ages.flushed.1 / eb).round() as usize;
            let mut below = Vec::new();
            for f in 1..=flushes {
                let levels = sim.flush();
                if f + 16 > flushes {
                    below.push(levels.iter().skip(1).map(|l| l.len()).sum::<usize>() as f64);
                }
            }
            let planner = below.iter().sum::<f64>() / below.len() as f64;
            let model = 1.0 + ages.segments.iter().map(|s| s.count).sum::<f64>();
            assert!(
                (planner - model).abs() <= 1.0,
                "{before} writes before: the planner keeps {planner} runs below the first level, the \
                 model {model} ({:?})",
                ages.segments
            );
            if before == 0 {
                // most of them the load's, which the model now counts
                let load: f64 = ages
                    .segments
                    .iter()
                    .filter(|s| s.load)
                    .map(|s| s.count)
                    .sum();
                assert!(load >= 0.5 * (model - 1.0), "{:?}", ages.segments);
            }
        }
    }

    #[test]
    fn a_partially_compacted_level_under_updates_covers_what_the_planner_leaves_it() {
        // Seed 17's held-out random #16 (T = 2, K = Z = 1, partial compaction of the oldest file, no filters,
        // 1 MiB files, YCSB-A over 30,000 keys after 133,824 updates): its six upper levels, each a file or a
        // few, were read by 37-91% of the lookups that reached them (44%, 37%, 39%, 50%, 62%, 91%) and a
        // lookup read 2.26 blocks. Taken to hold only their own keys' ranges they were priced at 0.88; the
        // planner's simulation under the updates (each merge keeping one version of a key) gives them 50-81%
        // and the lookups 2.52 (as `cosine validate --rescore` prices its slices).
        let (mut w, _) = validated_lsh();
        (w.operations_before, w.operations) = (2 * 133_824, 5_000);
        let mut d = Design::wiredtiger_like(713_031, 335_545);
        d.class = None;
        (d.size_ratio, d.hot_runs, d.cold_runs) = (2, 1, 1);
        d.compaction = Compaction::Partial;
        d.file_picking = FilePicking::Oldest;
        (d.file_bytes, d.block_bytes, d.merge_threshold) = (1 << 20, 32 << 10, 0.75);
        d.filter_bytes = 0;
        let cost = eval(&d, &w);
        let lookup = cost.per_op.lookup;
        assert!((1.9..=2.9).contains(&lookup), "{lookup}");
        // its writes, over all of them since the load as the validation measures them: 0.80 blocks a write
        // measured (flushes and merges, read and written), 0.96 priced in closed form, the simulation's 0.78
        (w.operations_before, w.operations) = (0, 2 * (133_824 + 2_482));
        let write = eval(&d, &w).per_op.insert;
        assert!((write - 0.80).abs() < 0.08, "{write}");
        let closed = eval_with(
            ReferenceQuirks {
                nominal_loaded_tree: true,
                ..ReferenceQuirks::NONE
            },
            &d,
            &w,
        );
        assert!(closed.per_op.insert > 0.9, "{}", closed.per_op.insert);
        // without the simulation (a load of more flushes than it runs) the levels hold only their own keys
        let nominal = closed.per_op.lookup;
        assert!(nominal < 1.2, "{nominal}");
    }

    /// An unclassified design with no filters and T above any block's entries (the engine's rule makes it a
    /// hash log): 512 MiB of buffer, 1 GiB of fences.
    fn lsh_test_design() -> Design {
        let mut d = Design::rocksdb_like(512 << 20, 0, 1 << 30);
        d.size_ratio = 1000;
        d.hot_runs = 999;
        d.cold_runs = 999;
        d.class = None;
        d
    }

    #[test]
    fn lsh_like_design() {
        let d = lsh_test_design();
        let w = workload(all_ops());
        let c = eval(&d, &w);
        assert_eq!(c.class, DesignClass::Lsh);
        // an existing key is on disk unless it is in memory: the hybrid log's mutable region (256 MiB, half
        // full on average) and its read-only region (the other 256 MiB of M_B) of 10^8 keys, each region
        // holding the entries the hash-log buffer charges (allocations and table) in its bytes
        let region = cosine_design::shape::hash_log_flush_entries(256 << 20, 16, 112) as f64;
        let in_memory = (region / 2.0 + region) / N as f64;
        assert!(
            (c.per_op.lookup - (1.0 - in_memory)).abs() < 0.002,
            "{} against {}",
            c.per_op.lookup,
            1.0 - in_memory
        );
        // an append-only log holds only its buffer
        let mut append_only = d.clone();
        append_only.log = LogKind::AppendOnly;
        let a = eval(&append_only, &w).per_op.lookup;
        let in_buffer = region / 2.0 / N as f64;
        assert!((a - (1.0 - in_buffer)).abs() < 0.002, "{a}");
        // the log's runs (the load's N and the versions the workload's writes left, in runs of M_B/2, a flush
        // being half of M_B, fewer than K, so never merged) are each sought through the hash index
        let keys = KeySpace::from_workload(&w);
        let shape = data_shape(&d, &w, &keys, &ReferenceQuirks::NONE);
        let eb = region;
        let ages = LshAges::new(&d, &w, &shape, &keys.parts(), eb, 999.0);
        let runs = ages.runs();
        // the writes are uniform over 10^8 keys: a buffer keeps nearly every one
        let written = w.operations as f64 * (w.mix.blind_update + w.mix.rmw);
        assert!(runs * eb > N as f64 + 0.99 * written && runs * eb <= N as f64 + written);
        let b = (4096.0f64 / 128.0).floor();
        assert!(
            (c.per_op.long_scan - (2.0 * runs + 1000.0 / b)).abs() < 1e-9,
            "{}",
            c.per_op.long_scan
        );
        // the reference code's FASTER: one I/O per scanned entry
        assert_eq!(
            DistributionAware::reference()
                .evaluate(&d, &w)
                .unwrap()
                .per_op
                .long_scan,
            1000.0
        );
        // with a sparse key universe, the reference code's unconditioned lookup all but vanishes
        let mut sparse = w.clone();
        sparse.reads = KeyDistribution::Uniform {
            universe: Some(1_000_000_000_000_000),
        };
        sparse.writes = sparse.reads.clone();
        let r = DistributionAware::reference()
            .evaluate(&d, &sparse)
            .unwrap();
        assert!(r.per_op.lookup < 0.05, "{}", r.per_op.lookup);
        assert!(eval(&d, &sparse).per_op.lookup > 0.9);
    }

    #[test]
    fn faster_reads_a_records_header_sector_then_the_rest() {
        assert_eq!(LshEngine::Cosine.record_reads(1024.0), 1.0);
        // a record past a sector always needs the second read; a small one when it straddles its sector
        assert_eq!(LshEngine::Faster.record_reads(1024.0), 2.0);
        assert!((LshEngine::Faster.record_reads(120.0) - (1.0 + 128.0 / 512.0)).abs() < 1e-12);
    }

    #[test]
    fn without_writes_the_hybrid_logs_region_holds_the_loads_newest_not_the_hot_keys() {
        // YCSB-C: zipfian reads, no writes; the data came from the load, one write a key. The read-only region
        // (256 MiB of M_B) holds the load's newest records, a uniform share of the N whichever keys the reads
        // favour, and the mutable region is empty
        let d = lsh_test_design();
        let mut w = workload(OperationMix {
            lookup: 1.0,
            ..Default::default()
        });
        w.reads = KeyDistribution::Zipfian {
            theta: 0.99,
            universe: None,
            items: None,
        };
        w.writes = w.reads.clone();
        let c = eval(&d, &w);
        assert_eq!(c.class, DesignClass::Lsh);
        let in_region =
            cosine_design::shape::hash_log_flush_entries(256 << 20, 16, 112) as f64 / N as f64;
        assert!(
            (c.per_op.lookup - (1.0 - in_region)).abs() < 0.002,
            "{} against {}",
            c.per_op.lookup,
            1.0 - in_region
        );
        // with writes the hot keys' recent versions are what the regions hold: far fewer lookups reach the disk
        let mut updates = w.clone();
        updates.mix = OperationMix {
            lookup: 0.5,
            blind_update: 0.5,
            ..Default::default()
        };
        assert!(eval(&d, &updates).per_op.lookup < 0.5 * c.per_op.lookup);
    }

    #[test]
    fn lsh_runs_past_their_index_memory_cost_index_reads() {
        let w = workload(all_ops());
        let lsh = |m_fp: u64| {
            let mut d = Design::rocksdb_like(512 << 20, 0, m_fp);
            d.size_ratio = 1000;
            d.hot_runs = 999;
            d.cold_runs = 999;
            d.class = None;
            d
        };
        let shape = data_shape(
            &lsh(0),
            &w,
            &KeySpace::from_workload(&w),
            &ReferenceQuirks::NONE,
        );
        // the runs hold the load's N versions and one for each write since that its buffer kept (never
        // merged: fewer than K runs)
        let keys = KeySpace::from_workload(&w);
        let eb = cosine_design::shape::hash_log_flush_entries(256 << 20, 16, 112) as f64;
        let versions = LshAges::new(&lsh(0), &w, &shape, &keys.parts(), eb, 999.0).versions();
        let needed = layout::engine_hash_index_bytes(versions, shape.entries_per_block) / 1.1;
        // every hash index in memory: a miss reads nothing, as with M_FP to spare
        let full = eval(&lsh(needed.ceil() as u64), &w).per_op;
        assert_eq!(full.empty_lookup, 0.0);
        assert_eq!(full, eval(&lsh(4 * needed as u64), &w).per_op);
        // less M_FP: the oldest runs go cold, and lookups and misses pay for them, more the less M_FP holds
        let mut last = full;
        for share in [0.75, 0.5, 0.25, 0.0] {
            let c = eval(&lsh((share * needed) as u64), &w).per_op;
            assert!(
                c.lookup > last.lookup,
                "{share}: {} <= {}",
                c.lookup,
                last.lookup
            );
            assert!(c.empty_lookup > last.empty_lookup, "{share}");
            assert_eq!(c.insert, full.insert);
            last = c;
        }
        // nothing resident: a miss reads an index block and a data block in every run
        let runs = versions / eb;
        assert!(
            (last.empty_lookup - 2.0 * runs).abs() < 1e-9,
            "{}",
            last.empty_lookup
        );
    }

    #[test]
    fn reference_btree_insert_matches_the_code_example() {
        // MODEL.md §2.6: the B-tree search sets Y = L; T = 64, B = 2048 gives σ_p = 0.0963 (with L = 2).
        let mut w = workload(OperationMix {
            insert: 1.0,
            ..Default::default()
        });
        w.key_bytes = 64;
        w.value_bytes = 64;
        w.entries = 1_000_000_000;
        let mut d = Design::wiredtiger_like(32 << 20, 1 << 20);
        d.size_ratio = 64;
        d.block_bytes = 256 * 1024;
        // 1e9 · 128 B / 32 MiB = 3815 → L = ⌈log64 3815⌉ = 2
        let c = DistributionAware::reference().evaluate(&d, &w).unwrap();
        assert_eq!((c.levels, c.cold_levels), (2, 2));
        assert!(
            (c.per_op.insert - 0.0963).abs() < 5e-5,
            "{}",
            c.per_op.insert
        );
    }

    /// Zipfian reads over a uniformly loaded store and no writes (YCSB-C as the harness runs it): an entry
    /// cache of 5% of the keys answers the hot keys' lookups, about as many as Zipf's head holds (0.55-0.79 of
    /// reads), not 5% of them; under uniform reads it answers 5%.
    #[test]
    fn an_entry_cache_under_zipfian_reads_of_a_uniform_load_catches_the_hot_keys() {
        let n = 1_000_000u64;
        let mut w = workload(OperationMix {
            lookup: 1.0,
            ..Default::default()
        });
        w.entries = n;
        w.reads = KeyDistribution::Zipfian {
            theta: 0.99,
            universe: Some(n),
            items: None,
        };
        w.writes = KeyDistribution::Uniform { universe: Some(n) };
        let plain = lsm(10, 1, 1, 10.0);
        let mut cached = plain.clone();
        cached.cache_bytes = n / 20 * (w.entry_bytes() + cosine_design::CACHE_ENTRY_OVERHEAD_BYTES);
        let ratio = eval(&cached, &w).per_op.lookup / eval(&plain, &w).per_op.lookup;
        assert!((0.2..0.45).contains(&ratio), "zipfian: {ratio}");
        w.reads = KeyDistribution::Uniform { universe: Some(n) };
        let ratio = eval(&cached, &w).per_op.lookup / eval(&plain, &w).per_op.lookup;
        assert!((ratio - 0.95).abs() < 0.01, "uniform: {ratio}");
    }

    #[test]
    fn a_workload_without_writes_finds_the_buffer_empty() {
        // zipfian reads: with zipfian updates the hot keys sit in the buffer and level 1; without writes the
        // data is where the load put it, so a lookup costs about one block on a filtered leveled tree (with the
        // fence memory the engine's run files need: a fence per 29 entries of a 4 KiB block, not 32)
        let mut d = lsm(10, 1, 1, 10.0);
        d.fence_bytes = N * 13 / 10;
        let zipf = KeyDistribution::Zipfian {
            theta: 0.99,
            universe: Some(N),
            items: None,
        };
        let mut ro = workload(OperationMix {
            lookup: 1.0,
            ..Default::default()
        });
        ro.reads = zipf.clone();
        ro.writes = KeyDistribution::Uniform { universe: Some(N) };
        let mut rw = workload(OperationMix {
            lookup: 0.5,
            blind_update: 0.5,
            ..Default::default()
        });
        rw.reads = zipf.clone();
        rw.writes = zipf;
        let (a, b) = (eval(&d, &ro).per_op.lookup, eval(&d, &rw).per_op.lookup);
        assert!(a > 0.99 && a < 1.05, "read-only {a}");
        assert!(b < a, "updated hot keys are found higher up: {b} vs {a}");
        // the reference code takes the buffer full of hot keys either way
        let r = DistributionAware::reference()
            .evaluate(&d, &ro)
            .unwrap()
            .per_op
            .lookup;
        assert!(r < a, "{r} vs {a}");
    }

    #[test]
    fn latest_reads_find_recent_inserts_high_up() {
        let mut w = workload(OperationMix {
            lookup: 0.95,
            insert: 0.05,
            ..Default::default()
        });
        w.reads = KeyDistribution::Latest { theta: 0.99 };
        let d = lsm(10, 1, 1, 10.0);
        let latest = eval(&d, &w).per_op.lookup;
        let mut uniform = w.clone();
        uniform.reads = KeyDistribution::Uniform { universe: Some(N) };
        let u = eval(&d, &uniform).per_op.lookup;
        // about a third of Zipf(0.99) mass over 1e8 ranks falls on the 2.6e5 newest (half of a 64 MiB buffer)
        assert!(latest < 0.8 * u, "latest {latest} vs uniform {u}");
        let q = ReferenceQuirks {
            latest_as_zipfian: true,
            ..ReferenceQuirks::NONE
        };
        let as_zipf = eval_with(q, &d, &w);
        assert!((as_zipf.per_op.lookup - latest).abs() > 0.05);
    }

    #[test]
    fn cold_runs_cost_an_index_block_per_probe() {
        let mut d = lsm(10, 1, 1, 10.0);
        d.fence_bytes /= 20;
        let w = workload(all_ops());
        // the same filters on both sides (Monkey over the nominal levels, which cold levels holding no data
        // leave alike)
        let nominal = ReferenceQuirks {
            monkey_over_nominal_levels: true,
            ..ReferenceQuirks::NONE
        };
        let fixed = eval_with(nominal, &d, &w);
        assert!(fixed.cold_levels >= 1);
        let q = ReferenceQuirks {
            cold_levels_hold_no_data: true,
            ..nominal
        };
        let reference = eval_with(q, &d, &w);
        // a miss pays data + index per cold run instead of one I/O
        let y = fixed.cold_levels as f64;
        assert!((fixed.per_op.empty_lookup - reference.per_op.empty_lookup - y).abs() < 1e-9);
        assert!(fixed.per_op.lookup > reference.per_op.lookup);
    }

    #[test]
    fn a_merge_threshold_below_one_deepens_the_tree() {
        // the engine pushes a level down at θ of its capacity: with θ = 0.5 the same data needs one more
        // level wherever it fills more than half of the last level (cosine_design::simulate finds the same)
        let w = workload(OperationMix {
            lookup: 1.0,
            ..OperationMix::default()
        });
        let q = ReferenceQuirks {
            merge_threshold_ignored: true,
            ..ReferenceQuirks::NONE
        };
        let mut deeper = 0;
        for shift in 0..8 {
            let mut d = lsm(10, 1, 1, 0.0);
            d.class = None;
            d.buffer_bytes >>= shift;
            let full = eval(&d, &w).levels;
            d.merge_threshold = 0.5;
            let half = eval(&d, &w).levels;
            assert!(half == full || half == full + 1, "{half} vs {full}");
            assert_eq!(eval_with(q, &d, &w).levels, full);
            // θ = 0.5 prices the tree of a buffer half the size
            let mut small = d.clone();
            small.merge_threshold = 1.0;
            small.buffer_bytes /= 2;
            assert_eq!(half, eval(&small, &w).levels);
            deeper += usize::from(half > full);
        }
        assert!(deeper > 0, "no buffer size made the tree deeper");
        // under writes, a level above the last holds θ/2 of its capacity on average, not half: fewer keys
        // in the upper levels change what a lookup pays there
        let w = workload(OperationMix {
            lookup: 0.5,
            insert: 0.5,
            ..OperationMix::default()
        });
        let mut d = lsm(10, 1, 1, 0.0);
        d.class = None;
        d.merge_threshold = 0.5;
        let fixed = eval(&d, &w);
        let ignored = eval_with(q, &d, &w);
        assert!(fixed.levels >= 2);
        assert_ne!(fixed.per_op.lookup, ignored.per_op.lookup);
    }

    #[test]
    fn a_file_moved_by_choose_first_spans_what_arrived_since_the_last_push() {
        // `cosine validate`'s fixed B-tree-like design (T = 16, K = Z = 1, partial compaction, choose_first,
        // θ = 0.5, 2 MiB flushes, 1 MiB files) under YCSB-A over 200,000 records of 1,000 bytes: measured
        // paced 4.98 blocks a write (at 75b9911), 2.5 of them written at level 2, where a moved file's even
        // share of it would be about 0.2
        let mut d = lsm(16, 1, 1, 0.0);
        d.class = None;
        d.filter_bytes = 0;
        d.block_bytes = 32 * 1024;
        d.buffer_bytes = 4 << 20;
        d.fence_bytes = 128 << 10;
        d.file_bytes = 1 << 20;
        d.compaction = Compaction::Partial;
        d.file_picking = FilePicking::ChooseFirst;
        d.run_strategy = RunStrategy::None;
        d.merge_threshold = 0.5;
        let mut w = Workload::with_mix(OperationMix {
            lookup: 0.5,
            blind_update: 0.5,
            ..OperationMix::default()
        });
        let zipf = KeyDistribution::Zipfian {
            theta: 0.99,
            universe: Some(200_000),
            items: Some(10_000_000_000),
        };
        (w.reads, w.writes) = (zipf.clone(), zipf);
        (w.entries, w.key_bytes, w.value_bytes) = (200_000, 23, 1000);
        (w.operations_before, w.operations) = (1_000_000, 100_000);
        let write = |q: ReferenceQuirks, d: &Design| eval_with(q, d, &w).per_op.blind_update;
        // the planner's simulation under the writes prices what it moves (5.11)
        let simulated = write(ReferenceQuirks::NONE, &d);
        assert!(
            (simulated - 4.98).abs() < 0.1 * 4.98,
            "{simulated} against 4.98 measured"
        );
        // the closed form, where the simulation does not run
        let closed = ReferenceQuirks {
            nominal_loaded_tree: true,
            ..ReferenceQuirks::NONE
        };
        let even_shares = ReferenceQuirks {
            files_overlap_evenly: true,
            ..closed
        };
        let (first, even) = (write(closed, &d), write(even_shares, &d));
        assert!(
            (first - 4.98).abs() < 0.25 * 4.98,
            "{first} against 4.98 measured"
        );
        assert!(even < 0.4 * first, "{even} (even shares) against {first}");
        // dense_fp picks the narrowest file: less than the even share
        d.file_picking = FilePicking::DenseFp;
        let dense = write(closed, &d);
        assert!(dense < even, "{dense} (dense_fp) against {even}");
    }

    #[test]
    fn a_partially_compacted_level_is_probed_only_for_its_own_keys() {
        // no filters: a lookup passing a level that spans the key space reads one of its blocks
        let mut d = lsm(10, 1, 1, 0.0);
        d.class = None;
        d.compaction = Compaction::Partial;
        let mut w = workload(OperationMix {
            lookup: 0.5,
            blind_update: 0.5,
            ..OperationMix::default()
        });
        w.reads = KeyDistribution::Uniform { universe: None };
        // (where the planner's simulation under the writes does not run: it gives each level the share of the
        // key space the planner leaves it, in between; see
        // a_partially_compacted_level_under_updates_covers_what_the_planner_leaves_it)
        let no_simulation = ReferenceQuirks {
            nominal_loaded_tree: true,
            ..ReferenceQuirks::NONE
        };
        let fixed = eval_with(no_simulation, &d, &w);
        let q = ReferenceQuirks {
            partial_levels_span_keys: true,
            ..no_simulation
        };
        let spanning = eval_with(q, &d, &w);
        let simulated = eval(&d, &w).per_op.lookup;
        assert!(
            simulated > fixed.per_op.lookup && simulated <= spanning.per_op.lookup,
            "{simulated}"
        );
        assert!(fixed.levels >= 2);
        // only passing probes change, and a key in the last level passes every level above it
        assert!(
            spanning.per_op.lookup > fixed.per_op.lookup + 0.5,
            "{} vs {}",
            spanning.per_op.lookup,
            fixed.per_op.lookup
        );
        assert_eq!(spanning.per_op.empty_lookup, fixed.per_op.empty_lookup);
        // levels that full compaction merges whole span the key space either way
        d.compaction = Compaction::Full;
        assert_eq!(
            eval_with(no_simulation, &d, &w).per_op.lookup,
            eval_with(q, &d, &w).per_op.lookup
        );
    }

    #[test]
    fn a_fence_pointer_is_its_key_and_a_block_handle() {
        // fences for every block at 16 bytes each fit only when a fence is taken to be its key alone
        let mut d = lsm(10, 1, 1, 10.0);
        d.fence_bytes = N * 16 / 32;
        let w = workload(all_ops());
        assert!(eval(&d, &w).cold_levels >= 1);
        let q = ReferenceQuirks {
            fence_is_key_only: true,
            ..ReferenceQuirks::NONE
        };
        assert_eq!(eval_with(q, &d, &w).cold_levels, 0);
    }

    #[test]
    fn integer_exponent_quirk_changes_r() {
        let w = workload(all_ops());
        let d = lsm(5, 3, 2, 6.0);
        let mut q = ReferenceQuirks {
            closed_form_fpr: true,
            ..ReferenceQuirks::NONE
        };
        let float = eval_with(q, &d, &w).fpr_sum;
        q.integer_exponents = true;
        let int = eval_with(q, &d, &w).fpr_sum;
        // K^{1/T} → 1 and T^{T/(T−1)} → T: the ratio is 3^{1/5}·5^{5/4}/5
        let expected = 3f64.powf(0.2) * 5f64.powf(1.25) / 5.0;
        assert!((float / int - expected).abs() < 1e-9, "{float} {int}");
    }

    #[test]
    fn scan_double_count_quirk() {
        let w = workload(all_ops());
        let d = lsm(10, 1, 1, 10.0);
        let full = ReferenceQuirks {
            scan_full_levels: true,
            ..ReferenceQuirks::NONE
        };
        let fixed = eval_with(full, &d, &w).per_op.long_scan;
        let q = ReferenceQuirks {
            scan_double_count: true,
            ..full
        };
        let quirky = eval_with(q, &d, &w).per_op.long_scan;
        // level L counted twice: close to double
        assert!(
            quirky > 1.8 * fixed && quirky < 2.0 * fixed,
            "{quirky} vs {fixed}"
        );
    }

    #[test]
    fn unclamped_fpr_quirk_exceeds_run_count_with_no_memory() {
        let w = workload(all_ops());
        let d = lsm(64, 1, 1, 0.0001);
        let q = ReferenceQuirks {
            closed_form_fpr: true,
            unclamped_fpr: true,
            ..ReferenceQuirks::NONE
        };
        let quirky = eval_with(q, &d, &w);
        let fixed = eval(&d, &w);
        assert!(fixed.fpr_sum <= fixed.levels as f64 + 1e-9);
        // MODEL.md §4: with M_BF → 0 the unclamped closed form gives R ≈ 1.07 for T = 64 … per level
        let r0 = 64f64.powf(64.0 / 63.0) / 63.0;
        assert!(
            (quirky.fpr_sum - r0).abs() / r0 < 1e-3,
            "{}",
            quirky.fpr_sum
        );
    }

    #[test]
    fn fence_sum_bug_quirk_uses_the_code_split() {
        let w = workload(all_ops());
        let mut d = lsm(10, 1, 1, 2.0);
        d.fence_bytes /= 4;
        let q = ReferenceQuirks {
            fence_sum_bug: true,
            ..ReferenceQuirks::NONE
        };
        let quirky = eval_with(q, &d, &w);
        let fixed = eval(&d, &w);
        assert!(quirky.fence_bytes != fixed.fence_bytes);
    }

    /// The closed form of a level's geometric sum against its terms added one by one.
    #[test]
    fn geometric_is_the_sum_of_its_terms() {
        let direct = |x: f64, la: f64, n: u64| -> f64 {
            (0..n).map(|j| exp_or_zero(x + scaled(j as f64, la))).sum()
        };
        for &x in &[0.0, -1e-9, -0.3, -7.0, -80.0, -744.0, -800.0] {
            for &la in &[
                0.0,
                -1e-14,
                -1e-9,
                -1e-4,
                -0.05,
                -0.7,
                -3.0,
                -40.0,
                f64::NEG_INFINITY,
            ] {
                for n in [0u64, 1, 2, 3, 7, 31, 47, 223, 1000] {
                    let (got, want) = (geometric(x, la, n), direct(x, la, n));
                    assert!(
                        (got - want).abs() <= 1e-12 * want.abs() + 1e-300,
                        "x {x}, λ {la}, n {n}: {got} against {want}"
                    );
                }
            }
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(64))]

        /// More filter memory never makes a lookup dearer (Monkey allocation is monotone) in the steady state.
        /// Where the planner's simulation gives the phase the operations meet, the price is that phase's, and
        /// more filter bits make the run files larger, which can move the phase by a flush (see
        /// `the_phase_the_operations_meet_moves_with_the_files_filter_bits`): the property is about the filters,
        /// so it is checked on the steady state's tree.
        #[test]
        fn lookups_monotone_in_filter_memory(t in 2u64..20, k_frac in 0.0f64..1.0, bits in 0.05f64..12.0, extra in 0.01f64..6.0) {
            let k = 1 + ((t - 2) as f64 * k_frac) as u64;
            let w = workload(all_ops());
            let steady = ReferenceQuirks { nominal_loaded_tree: true, ..ReferenceQuirks::NONE };
            let a = eval_with(steady, &lsm(t, k, 1, bits), &w).per_op;
            let b = eval_with(steady, &lsm(t, k, 1, bits + extra), &w).per_op;
            prop_assert!(b.empty_lookup <= a.empty_lookup + 1e-12);
            prop_assert!(b.lookup <= a.lookup + 1e-12);
        }

        /// More fence memory never adds cold levels, so never makes a miss dearer.
        #[test]
        fn misses_monotone_in_fence_memory(t in 2u64..20, frac in 0.0f64..1.0) {
            let w = workload(all_ops());
            let full = lsm(t, 1, 1, 6.0);
            let mut less = full.clone();
            less.fence_bytes = (full.fence_bytes as f64 * frac) as u64;
            let (a, b) = (eval(&less, &w), eval(&full, &w));
            prop_assert!(b.cold_levels <= a.cold_levels);
            prop_assert!(b.per_op.empty_lookup <= a.per_op.empty_lookup + 1e-12);
        }

        /// Every cost is finite and non-negative for any valid design.
        #[test]
        fn costs_finite(t in 2u64..200, k_frac in 0.0f64..1.0, z_frac in 0.0f64..1.0, bits in 0.0f64..20.0,
                        fence_frac in 0.0f64..1.5, buf_mb in 1u64..4096) {
            let k = 1 + ((t - 2) as f64 * k_frac) as u64;
            let z = 1 + ((t - 2) as f64 * z_frac) as u64;
            let mut d = lsm(t, k, z, bits);
            d.buffer_bytes = buf_mb << 20;
            d.fence_bytes = (d.fence_bytes as f64 * fence_frac) as u64;
            if d.filter_bytes == 0 { d.class = None; }
            let c = eval(&d, &workload(all_ops()));
            for v in [c.per_op.lookup, c.per_op.empty_lookup, c.per_op.insert, c.per_op.rmw, c.per_op.long_scan, c.total] {
                prop_assert!(v.is_finite() && v >= 0.0, "{:?}", c);
            }
        }
    }
}

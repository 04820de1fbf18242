//! The lookup price (σ_l): the chance a lookup of a key of each partition gets past the buffer and each run
//! without finding it, what passing a run costs (a filter false positive or a cold run's index and data
//! block), and the tree a read-only workload meets after a load ([`loaded_lookup`]); the entry cache's hits.

use crate::dist::flow::writes;
use crate::dist::latest::{latest_lookup, latest_lookup_simulated, SimLevel};
use crate::dist::met::MetTree;
use crate::dist::tree::{scaled, Tree};
use crate::keys::{exp_or_zero, AlphaForm, KeyPart, KeySpace};
use crate::layout;
use crate::quirks::ReferenceQuirks;
use cosine_design::{Design, KeyDistribution, Workload};

/// σ_l of a tree-shaped design on the tree it holds ([`MetTree`]): under "latest" reads by recency
/// ([`super::latest`]); for a workload that never writes over a uniform load, on the tree the load left
/// ([`read_only_lookup`]); otherwise per key partition on the tree at its mean or at the phases of its cycles
/// ([`lookup_cost`]), less what the entry cache answers. `spans` is per level the share of the key space its
/// files cover; `simulated` the planner's simulated levels under the writes, where it ran.
pub(super) fn tree_lookup(
    design: &Design,
    workload: &Workload,
    parts: &[KeyPart],
    met: &MetTree,
    spans: &[f64],
    simulated: Option<&[SimLevel]>,
    q: &ReferenceQuirks,
) -> f64 {
    let tree = &met.tree;
    let entries = workload.entries as f64;
    if let (KeyDistribution::Latest { theta }, false) = (&workload.reads, q.latest_as_zipfian) {
        return match simulated {
            Some(levels) => latest_lookup_simulated(levels, tree.alpha_entries[0], *theta, entries),
            None => latest_lookup(&tree.for_lookups(spans).0, *theta, entries),
        };
    }
    if tree.l == 0 {
        return 0.0;
    }
    if !writes(workload)
        && matches!(workload.writes, KeyDistribution::Uniform { .. })
        && !q.full_buffer
    {
        return read_only_lookup(design, workload, parts, met, spans, q);
    }
    let mut lookup = 0.0;
    let mut scratch = Vec::new();
    let hits = cache_hits(design, workload, parts);
    let missing = empty_lookup(tree);
    // the tree at its mean, or at the points of its cycles where the mean does not price it
    for (weight, tree) in met.weighted() {
        let (seen, spans) = tree.for_lookups(spans);
        for (part, hit) in parts.iter().zip(hits.iter()) {
            if part.get <= 0.0 {
                continue;
            }
            // ā_{−1}: a lookup the entry cache answers reaches neither buffer nor runs (MODEL.md §2.2)
            lookup += weight
                * part.get
                * (1.0 - hit)
                * lookup_cost(&seen, part, &spans, &mut scratch).unwrap_or(missing);
        }
    }
    lookup
}

/// σ_n: a lookup of a missing key passes every hot run (a filter's false positives, R) and reads a data block
/// of every cold run (no filter), and its index block in the fixed model.
pub(super) fn empty_lookup(tree: &Tree) -> f64 {
    if tree.l == 0 {
        0.0
    } else {
        tree.fpr_sum + tree.y as f64 * tree.z * (1.0 + tree.index_cost[tree.l as usize])
    }
}

/// σ_l of a workload that never writes, after a uniform load: on the tree the load left, as the engine's
/// planner builds it ([`crate::loaded::loaded_trees`], averaged over where the load's end falls in its levels'
/// fill cycles), or, where the load is too many flushes to simulate, each level holding its share of the keys.
/// The entry cache answers the lookups of the keys the reads keep in it.
fn read_only_lookup(
    design: &Design,
    workload: &Workload,
    parts: &[KeyPart],
    met: &MetTree,
    spans: &[f64],
    q: &ReferenceQuirks,
) -> f64 {
    let tree = &met.tree;
    let l = tree.l;
    let sizes = crate::loaded::Sizes::of(
        workload.key_bytes as usize,
        workload.value_bytes as usize,
        design.block_bytes as usize,
    );
    let loaded = if q.nominal_loaded_tree {
        None
    } else {
        crate::loaded::loaded_trees(design, met.stored.effective_entries, sizes)
    };
    let mut lookup = 0.0;
    if let Some(trees) = loaded {
        // averaged over where the load's end falls in its levels' fill cycles
        lookup = trees
            .iter()
            .map(|runs| loaded_lookup(tree, runs, met.fence_bytes, sizes.fence_per_entry))
            .sum::<f64>()
            / trees.len().max(1) as f64;
    } else {
        // After a uniform load and no writes each level holds its share of the keys. A level that compaction
        // merges whole spans the key space, so every lookup that passes it probes its runs (a filter false
        // positive, or a block without filters, plus the index when cold); a level that partial compaction
        // feeds file by file holds the contiguous key ranges it has not pushed down yet, so only the lookups
        // whose key it holds touch it, unless it holds several runs.
        let mut above = 0.0;
        for i in 1..=l {
            let iu = i as usize;
            let cold_share = 1.0 - (tree.resident[iu] / tree.runs[iu].max(1e-12)).min(1.0);
            let own = 1.0 + tree.index_cost[iu] * cold_share;
            lookup += layout::data_share(i, l, tree.t) * (above + own);
            // (a level of several runs spans the key space whatever the compaction: each run is a whole
            // flush or merge)
            above += spans[iu] * tree.pass_level(iu);
        }
    }
    // the entry cache answers the lookups of the keys the reads keep in it: the levels hold every key alike
    // (the load was uniform), but the reads themselves may be skewed (YCSB-C: zipfian reads over a uniform
    // load), so the hit chance comes from the read distribution's partitions (for uniform reads it is n/N, n
    // entries cached of the N stored)
    if design.cache_bytes > 0 {
        let hits = cache_hits(design, workload, parts);
        let reads: f64 = parts.iter().map(|p| p.get).sum();
        let hit: f64 = parts.iter().zip(hits.iter()).map(|(p, h)| p.get * h).sum();
        lookup *= 1.0 - (hit / reads.max(1e-12)).clamp(0.0, 1.0);
    }
    lookup
}

/// Per key partition, the chance that a lookup of an existing key is answered by the design's entry cache
/// (M_BC; all 0 without one): entries of the workload's size plus the cache's per-entry overhead, kept by the
/// lookups, emptied of a key by its blind updates and read-modify-writes (whose reads do not fill it).
pub(super) fn cache_hits<'a>(
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

/// σ_l over the tree a load left ([`crate::loaded`]), for a workload that never writes: a lookup of a key held
/// by a run passes every run above it (newest first, level by level) whose files hold the key's range (a filter false
/// positive when the run is resident, its index block and a data block when cold: a cold run keeps no filter
/// in memory), then reads its own block (and the index block when cold). Runs keep their fences resident newest
/// first while M_FP lasts, the first that does not fit in part (the engine keeps its leading files' fences).
pub(super) fn loaded_lookup(
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

/// Per level of a tree, for the keys of one partition, the chances [`lookup_cost`] sums: `la[i]` = ln ā_i (the
/// chance a key is not in one run of level i, 0 the buffer); `one[i]` = e^{ln ā} − 1 and `every[i]` =
/// e^{R ln ā} − 1 over the level's R whole runs; `miss[i]`, the chance the key is in none of its runs;
/// `prefix[i]` = Σ_{h=1}^{i−1} runs_h ln ā_h; `reach[i]`, the chance a lookup gets past the buffer and levels
/// 1..i−1; `below[i]`, the chance the key is in none of the levels under i.
struct Chances<'s> {
    la: &'s [f64],
    prefix: &'s [f64],
    reach: &'s [f64],
    below: &'s [f64],
    one: &'s [f64],
    every: &'s [f64],
    miss: &'s [f64],
}

impl<'s> Chances<'s> {
    /// The chances of `part`'s keys over `tree`, worked out in `scratch` (products of each level's chance
    /// instead of an exp per sum).
    fn of(tree: &Tree, part: &KeyPart, scratch: &'s mut Vec<f64>) -> Self {
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
        // e^{ln ā} − 1, e^{R ln ā} − 1 over its R whole runs, and e^{runs ln ā}: the chance the key is in none
        // of its runs (from the second when the runs are whole)
        for i in 0..=l {
            // (the linear form, α = put·n/U, counts the run's distinct keys; the exact one the writes it
            // gathered)
            let n = match part.alpha {
                AlphaForm::Linear => tree.alpha_entries[i],
                AlphaForm::Exact => tree.alpha_writes[i],
            };
            // (a share of the stored keys a group holds whatever the writes did counts for the partitions whose
            // α counts writes; a linear partition's α already counts a run's entries among its keys)
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
        reach[1] = exp_or_zero(la[0]);
        for i in 1..=l {
            prefix[i + 1] = prefix[i]
                + if tree.runs[i].trunc() == tree.runs[i] {
                    scaled(tree.runs[i], la[i])
                } else {
                    miss[i].ln()
                };
            if i < l {
                reach[i + 1] = reach[i] * miss[i];
            }
        }
        below[l] = 1.0;
        for i in (2..=l).rev() {
            below[i - 1] = below[i] * miss[i];
        }
        Chances {
            la,
            prefix,
            reach,
            below,
            one,
            every,
            miss,
        }
    }
}

/// σ_l for keys of one partition: C_0 plus the filter-probe costs C_{r,i}, D_{r,i} weighted by p_i.
/// Returns None when such a key can never exist (q = 0).
/// `spans[i]`: the share of the key space level i's files cover, so that a lookup passing it probes it when
/// its key lies in one (1: the level spans the key space; 0: a lookup touches it only when it holds the key;
/// see `ReferenceQuirks::partial_levels_span_keys`). `scratch` is working memory the caller may reuse across
/// calls.
pub(super) fn lookup_cost(
    tree: &Tree,
    part: &KeyPart,
    spans: &[f64],
    scratch: &mut Vec<f64>,
) -> Option<f64> {
    let l = tree.l as usize;
    let c = Chances::of(tree, part, scratch);
    let disk = c.prefix[l + 1]; // ln Π
    let q = -(c.la[0] + disk).exp_m1();
    if !(q > 0.0) {
        return None;
    }
    let mut cost = c.reach[1] * -disk.exp_m1(); // C_0 (over q, as every term, at the end)
    for (i, &span) in spans.iter().enumerate().take(l + 1).skip(1) {
        if tree.index_cost[i] > 0.0 {
            cost += cold_index_reads(tree, &c, i);
        }
        if span <= 0.0 {
            continue;
        }
        if let Some(level) = passes(tree, &c, i, span) {
            cost += level;
        }
    }
    // (every term is over q, the chance the key is stored at all)
    Some(cost / q)
}

/// The index blocks a lookup reads at level `i` reaching the run that holds its key through its on-disk index,
/// when that run is cold.
fn cold_index_reads(tree: &Tree, c: &Chances, i: usize) -> f64 {
    let idx = tree.index_cost[i];
    if tree.resident[i] <= 0.0 {
        // e^{runs·λ} − 1 is `every` when the runs are whole
        let all = if tree.runs[i].trunc() == tree.runs[i] {
            c.every[i]
        } else {
            c.miss[i] - 1.0
        };
        return idx * c.reach[i] * -all;
    }
    // Σ_r cold(r)·reach·e^{(r−1)λ}·hit over the runs with a cold share (the first after the resident ones
    // on), e^{(r−1)λ} by products of e^λ (the first cold run may be cold in part; every one after it is wholly
    // cold: a geometric sum)
    let la = c.la[i];
    let hit = -la.exp_m1();
    let first_cold = (tree.resident[i].floor() as u64).saturating_add(1).max(1);
    let sum_over = |n: u64| {
        if first_cold > n || tree.resident[i] >= tree.runs[i] {
            0.0
        } else {
            tree.cold(i, first_cold as f64) * exp_or_zero(scaled((first_cold - 1) as f64, la))
                + geometric(scaled(first_cold as f64, la), la, n - first_cold)
        }
    };
    idx * c.reach[i] * hit * mixed(tree.runs[i], &sum_over)
}

/// The blocks a lookup reads passing the runs of level `i` that do not hold its key (a filter's false
/// positive at a resident run, an index and a data block at a cold one), where the level's files cover `span`
/// of the key space; None where passing it costs nothing.
fn passes(tree: &Tree, c: &Chances, i: usize, span: f64) -> Option<f64> {
    let runs = tree.runs[i] as u64;
    let la = c.la[i];
    // one probe cost for the whole level unless it is partly resident
    let uniform = tree.resident[i] <= 0.0 || tree.resident[i] >= tree.runs[i];
    let level_p = tree.pass(i, 1.0);
    if uniform && level_p == 0.0 {
        return None;
    }
    let level = if uniform {
        // a level holding R = w + f runs on average (a tiered level over its fill cycle): w runs for 1 − f of
        // the time and w + 1 for f of it
        let over = |n: u64| {
            let every_n = if n == runs {
                c.every[i]
            } else {
                scaled(n as f64, la).exp_m1()
            };
            level_pass_uniform(c.reach[i], c.one[i], every_n, c.below[i], n)
        };
        level_p * mixed(tree.runs[i], &over)
    } else {
        // Σ_r pass(r)·e^{before_r}·(1 − e^{after_r}·below) with before_r = ln ā_0 + prefix + rλ and after_r =
        // (R − r)λ: e^{before_r} by products of e^λ, and e^{before_r + after_r} is the same for every run.
        // The runs fall in three stretches of one pass cost each: the resident ones (r ≤ ⌊resident⌋), the one
        // resident in part, and the cold ones after it; e^{before_r} summed over a stretch is a geometric sum,
        // and e^{before_r} ≥ e^{before_R} ≥ e^{before_R + after_R}·below term by term.
        let start = c.la[0] + c.prefix[i];
        let over = |runs: u64| {
            let through = exp_or_zero(start + scaled(runs as f64, la)) * c.below[i];
            let stretch = |from: u64, to: u64| -> f64 {
                if from > to {
                    return 0.0;
                }
                let n = to - from + 1;
                let before = geometric(start + scaled(from as f64, la), la, n);
                tree.pass(i, from as f64) * (before - n as f64 * through).max(0.0)
            };
            let resident = (tree.resident[i].floor() as u64).min(runs);
            let part = resident + 1;
            stretch(1, resident) + stretch(part, part.min(runs)) + stretch(part + 1, runs)
        };
        mixed(tree.runs[i], &over)
    };
    // a level whose files cover a share c of the key space: a lookup whose key lies outside them skips it. A
    // key the level holds lies inside, so of the lookups that reach it without their key there (1 − a of
    // those that reach it, a the chance the key is there), (c − a)/(1 − a) are inside
    Some(if span < 1.0 {
        let a = -c.one[i];
        level * ((span - a) / (1.0 - a).max(f64::MIN_POSITIVE)).clamp(0.0, 1.0)
    } else {
        level
    })
}

/// `f` over a level of `runs` runs on average, w + f of them: f(w) for 1 − f of the time and f(w + 1) for f
/// of it (a tiered level over its fill cycle).
pub(super) fn mixed(runs: f64, f: &dyn Fn(u64) -> f64) -> f64 {
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
pub(super) fn geometric(x: f64, la: f64, n: u64) -> f64 {
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
pub(super) fn level_pass_uniform(reach: f64, one: f64, every: f64, below: f64, runs: u64) -> f64 {
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

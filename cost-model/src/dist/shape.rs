//! The tree's shape from the design's primitives: its levels, runs per level and entries per run
//! ([`build_tree`]), the steady state's fill ([`steady_state`]), and the filters' bits per level as the
//! engine writes them within M_BF ([`refilter`]).

use crate::bloom::{self, RunGroup};
use crate::dist::reference::closed_form_fprs;
use crate::dist::tree::Tree;
use crate::layout::{self, DataShape};
use crate::quirks::ReferenceQuirks;
use cosine_design::shape::MAX_BITS_PER_KEY;
use cosine_design::Design;

pub(super) fn build_tree(
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
        fpr_sum = closed_form_fprs(
            &mut fpr,
            &runs,
            filter_bytes,
            shape.entries,
            t,
            k,
            z,
            y,
            h,
            quirks,
        );
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

/// The FPR per hot level and R as our engine's filters give them: each file's filter has its level's Monkey
/// bits over a nominal tree of every entry the levels hold (`bits_per_key_per_level`, the engine's own rule:
/// versions and the runs a tiered level gathers included, cold levels given their share too), and the filters
/// the hot runs hold stay within M_BF: a flush keeps level 1's bits, compaction outputs below get fewer when
/// the levels hold more than their nominal share.
pub(super) fn refilter(tree: &mut Tree, filter_bytes: f64, slots: bool) {
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

/// The steady state a lookup meets: the buffer fills from empty between flushes, and each level above the
/// last from empty between merges into the next, so on average each holds half its capacity; a workload that
/// never writes finds the buffer empty (whatever the load left there has been flushed) and the last level
/// holding every key.
/// A level is pushed down once it holds `fill` (the design's merge threshold θ) of its capacity, so it holds
/// θ/2 of it on average.
pub(super) fn steady_state(tree: &mut Tree, writes: bool, effective_entries: f64, fill: f64) {
    let l = tree.l as usize;
    tree.alpha_entries[0] = if writes { tree.eb / 2.0 } else { 0.0 };
    for i in 1..l {
        tree.alpha_entries[i] = tree.run_entries[i] * fill / 2.0;
    }
    if l >= 1 {
        tree.alpha_entries[l] = tree.run_entries[l].min(effective_entries / tree.runs[l].max(1.0));
    }
}

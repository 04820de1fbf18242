//! The reference code's arithmetic where it differs from the model's own: the closed-form R and Table 2's
//! σ_p. Only [`crate::ReferenceQuirks`] reach it; the fixed model never does.

use crate::dist::flow::writes;
use crate::dist::lsh::Log;
use crate::dist::scan::Scans;
use crate::dist::tree::Tree;
use crate::dist::Calibration;
use crate::keys::harmonic;
use crate::keys::{coupon_collector, exp_or_zero, writes_to_fill, KeyPart, KeySpace};
use crate::layout::DataShape;
use crate::quirks::ReferenceQuirks;
use crate::{IoCost, PerOp};
use cosine_design::{Design, DesignClass, KeyDistribution, LogKind, Workload};

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

/// The hot levels' FPRs from the closed-form R (`closed_form_fpr`): level i < h gets R·(T − 1)/(T·K·T^{h−i}),
/// the last hot level R·(T − 1)/(T·Z), each clamped to 1 unless `unclamped_fpr`; returns the sum over the
/// hot runs (R itself when unclamped).
#[allow(clippy::too_many_arguments)] // the reference code's closed form takes the tree's primitives as they are
pub(super) fn closed_form_fprs(
    fpr: &mut [f64],
    runs: &[f64],
    filter_bytes: f64,
    n: f64,
    t: f64,
    k: f64,
    z: f64,
    y: u32,
    h: u32,
    q: &ReferenceQuirks,
) -> f64 {
    let r = closed_form_r(filter_bytes, n, t, k, z, y, q);
    for i in 1..=h {
        let p = if i < h {
            r * (t - 1.0) / (t * k * t.powi((h - i) as i32))
        } else {
            r * (t - 1.0) / (t * z)
        };
        fpr[i as usize] = if q.unclamped_fpr { p } else { p.min(1.0) };
    }
    if q.unclamped_fpr {
        r
    } else {
        (1..=h).map(|i| runs[i as usize] * fpr[i as usize]).sum()
    }
}

/// Q_i: expected writes that fill level i (i = 0 is the buffer; i may be −1 in the reference code's B-tree use).
pub(super) fn fill_writes(tree: &Tree, keys: &KeySpace, parts: &[KeyPart], i: i32) -> f64 {
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
pub(super) fn insert_cost(
    tree: &Tree,
    keys: &KeySpace,
    parts: &[KeyPart],
    quirks: &ReferenceQuirks,
) -> f64 {
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

/// Table 2's scans, as the reference code prices them (`scan_full_levels`): a long scan reads 2·s/N of every
/// level's capacity (a B-tree-like design its leaves, s/B, below its internal levels), a short one K runs of
/// each hot level above the last and Z of the rest; a long scan also pays the short one's seeks unless
/// `scan_without_seeks`. A scan within one block is charged the short one.
pub(super) fn table2_scans(
    q: &ReferenceQuirks,
    design: &Design,
    workload: &Workload,
    shape: &DataShape,
    tree: &Tree,
    class: DesignClass,
    filter_bytes: f64,
) -> Scans {
    let (t, k, z, l, y, eb) = (tree.t, tree.k, tree.z, tree.l, tree.y, tree.eb);
    let h = tree.last_hot();
    let (s, n, b) = (
        workload.scan_length as f64,
        shape.entries,
        shape.entries_per_block,
    );
    let is_btree_scan = if q.btree_discount {
        design.size_ratio.is_multiple_of(16) && design.hot_runs == 1 && !(filter_bytes > 0.0)
    } else {
        class == DesignClass::Btree
    };
    let long = if is_btree_scan {
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
    let short = if y == 0 && q.short_scan_kl {
        k * l as f64
    } else {
        k * h.saturating_sub(1) as f64 + z * (y as f64 + 1.0)
    };
    let long = if q.scan_without_seeks || is_btree_scan {
        long
    } else {
        long + short
    };
    Scans {
        long,
        short,
        charged: if s <= b { short } else { long },
    }
}

/// An LSH design priced with the reference code's FASTER constants (`lsh_calibrated`): a key is in memory
/// when the log's mutable tail (0.9 of it, the hybrid log) or its read-only part (0.1) holds it, and exists
/// when memory or one of K full runs does; a lookup costs 1.8 I/Os a record on disk (append-only) or 1, an
/// insert 1.5 (append-only) or 1/B, a miss 1, an update a lookup and 1/B, a scan one I/O an entry.
pub(super) fn calibrated_lsh(
    calibration: &Calibration,
    q: &ReferenceQuirks,
    design: &Design,
    workload: &Workload,
    shape: &DataShape,
    log: &Log,
) -> IoCost {
    let t = design.size_ratio as f64;
    let (eb, k, n, b) = (log.eb, log.k, log.n, shape.entries_per_block);
    let (mut lookup, mut insert, mut weight) = (0.0, 0.0, 0.0);
    for (part, hit) in log.parts.iter().zip(log.hits.iter()) {
        let a0 = match design.log {
            LogKind::AppendOnly => KeySpace::alpha(part, log.buffer),
            // a mutable tail of 0.9 of the log's memory and a read-only 0.1
            LogKind::Hybrid => {
                let mutable = KeySpace::alpha(part, 0.9 * eb);
                let read_only = KeySpace::alpha(part, 0.1 * eb);
                1.0 - (1.0 - mutable) * (1.0 - read_only)
            }
        };
        // a key exists when it is in memory or in one of K full runs (of eb·T/K entries each for an
        // append-only log, eb·T for the hybrid one)
        let run = match design.log {
            LogKind::AppendOnly => eb * t / k,
            LogKind::Hybrid => eb * t,
        };
        let pi = exp_or_zero(k * (-KeySpace::alpha(part, run)).ln_1p());
        let (on_disk, exists) = ((1.0 - pi) * (1.0 - a0), 1.0 - pi * (1.0 - a0));
        if exists <= 0.0 {
            continue;
        }
        let cond = if q.lsh_unconditioned {
            on_disk
        } else {
            on_disk / exists
        };
        let (l_cost, p_cost) = match design.log {
            LogKind::AppendOnly => (
                calibration.lsh_lookup_scale * cond,
                calibration.lsh_insert_scale * on_disk / exists,
            ),
            LogKind::Hybrid => (cond, (1.0 / b).min(on_disk / exists)),
        };
        lookup += part.get * (1.0 - hit) * l_cost;
        insert += part.put * p_cost;
        weight += part.get;
    }
    if weight > 0.0 && !q.lsh_unconditioned {
        lookup /= weight;
    }
    if let (KeyDistribution::Latest { theta }, false) = (&workload.reads, q.latest_as_zipfian) {
        // the newest keys are in the buffer (half full on average)
        let in_buffer = if writes(workload) { eb / 2.0 } else { 0.0 };
        lookup = 1.0 - harmonic(in_buffer.min(n), *theta) / harmonic(n, *theta);
    }
    let s = workload.scan_length as f64;
    let per_op = PerOp {
        lookup,
        // a miss follows its hash bucket's chain to the log once: the index covers N/8 keys
        empty_lookup: 1.0,
        insert,
        blind_update: lookup + 1.0 / b,
        rmw: lookup + 1.0 / b,
        long_scan: s,
        short_scan: s,
    };
    IoCost::lsh(
        design,
        workload,
        log.ages.levels(),
        per_op,
        per_op.long_scan,
        log.ages.probes(),
    )
}

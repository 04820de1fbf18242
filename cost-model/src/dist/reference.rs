//! The reference code's arithmetic where it differs from the model's own: the closed-form R and Table 2's
//! σ_p. Only [`crate::ReferenceQuirks`] reach it; the fixed model never does.

use crate::dist::tree::Tree;
use crate::keys::{coupon_collector, exp_or_zero, writes_to_fill, KeyPart, KeySpace};
use crate::quirks::ReferenceQuirks;

/// R as the reference code computes it (closed form with T^Y in the exponent).
pub(super) fn closed_form_r(
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

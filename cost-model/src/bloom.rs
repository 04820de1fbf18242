//! Bloom filters: false-positive rates and Monkey/Dostoevsky memory allocation (MODEL.md §4).

pub use cosine_design::shape::{
    bits_for_fpr, fpr, fpr_sum, monkey_allocate, monkey_bits_per_key, RunGroup, LN2_SQ,
};
use std::f64::consts::LN_2;

/// Hash functions for `bits_per_entry`: round(b·ln 2), at least 1.
pub fn hash_functions(bits_per_entry: f64) -> u32 {
    ((bits_per_entry * LN_2).round() as u32).max(1)
}

/// Monkey's closed form for a leveled tree (many levels, enough memory):
/// R = e^{−(M/N)ln²2} · T^{T/(T−1)} / (T−1), with M the filter bits.
pub fn monkey_leveling_r(bits_per_entry: f64, t: f64) -> f64 {
    (-bits_per_entry * LN2_SQ).exp() * t.powf(t / (t - 1.0)) / (t - 1.0)
}

/// Monkey's closed form for a tiered tree (T−1 runs per level): R = e^{−(M/N)ln²2} · T^{T/(T−1)}.
pub fn monkey_tiering_r(bits_per_entry: f64, t: f64) -> f64 {
    (-bits_per_entry * LN2_SQ).exp() * t.powf(t / (t - 1.0))
}

/// Dostoevsky's Fluid LSM-tree closed form (K runs at smaller levels, Z at the largest):
/// R = e^{−(M/N)ln²2} · T^{T/(T−1)}/(T−1) · Z^{(T−1)/T} · K^{1/T}.
pub fn fluid_r(bits_per_entry: f64, t: f64, k: f64, z: f64) -> f64 {
    monkey_leveling_r(bits_per_entry, t) * z.powf((t - 1.0) / t) * k.powf(1.0 / t)
}

/// The Dostoevsky memory threshold X (bits per entry) below which the largest level's filter is worthless:
/// X = (ln T/(T−1) + (ln K − ln Z)/T) / ln²2, clamped at 0.
pub fn memory_threshold(t: f64, k: f64, z: f64) -> f64 {
    (((t.ln() / (t - 1.0)) + (k.ln() - z.ln()) / t) / LN2_SQ).max(0.0)
}

/// The low-memory form (MODEL.md §4): when the bits per entry fall below X, the largest `y` levels get no
/// filter, y = max(0, ⌈log_T(X / (M/N))⌉), and R = fluid_r(bits·T^y) + y·Z. Returns (R, y).
pub fn fluid_r_low_memory(bits_per_entry: f64, t: f64, k: f64, z: f64) -> (f64, u32) {
    let x = memory_threshold(t, k, z);
    if bits_per_entry >= x {
        return (fluid_r(bits_per_entry, t, k, z), 0);
    }
    if bits_per_entry <= 0.0 {
        return (f64::INFINITY, u32::MAX);
    }
    let y = ((x / bits_per_entry).ln() / t.ln()).ceil().max(0.0) as u32;
    (
        fluid_r(bits_per_entry * t.powi(y as i32), t, k, z) + y as f64 * z,
        y,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn levels(t: f64, l: usize, k: f64, z: f64, n: f64) -> Vec<RunGroup> {
        // level i holds a share T^i of the data; the largest level has Z runs, the others K.
        let total: f64 = (1..=l).map(|i| t.powi(i as i32)).sum();
        (1..=l)
            .map(|i| {
                let runs = if i == l { z } else { k };
                RunGroup {
                    entries: n * t.powi(i as i32) / total / runs,
                    runs,
                }
            })
            .collect()
    }

    #[test]
    fn fpr_and_bits_are_inverse() {
        for b in [0.5, 1.0, 5.0, 10.0, 20.0] {
            assert!((bits_for_fpr(fpr(b)) - b).abs() < 1e-9);
        }
        // 10 bits per key: about 0.82 % (the textbook figure)
        assert!((fpr(10.0) - 0.00819).abs() < 1e-4);
        assert_eq!(hash_functions(10.0), 7);
    }

    #[test]
    fn allocator_spends_exactly_the_memory() {
        let g = levels(10.0, 6, 1.0, 1.0, 1e8);
        let bits = 10.0 * 1e8;
        let p = monkey_allocate(&g, bits);
        let spent: f64 = g
            .iter()
            .zip(&p)
            .map(|(g, p)| g.runs * g.entries * bits_for_fpr(*p))
            .sum();
        assert!((spent - bits).abs() / bits < 1e-9);
        // FPR proportional to run size (Monkey's insight)
        for w in p.windows(2) {
            assert!((w[1] / w[0] - 10.0).abs() < 1e-6);
        }
    }

    #[test]
    fn closed_forms_match_the_exact_allocator_with_many_levels() {
        for (t, k, z) in [
            (10.0, 1.0, 1.0),
            (4.0, 3.0, 3.0),
            (8.0, 7.0, 1.0),
            (5.0, 2.0, 3.0),
        ] {
            let g = levels(t, 14, k, z, 1e12);
            let p = monkey_allocate(&g, 10.0 * 1e12);
            let exact = fpr_sum(&g, &p);
            let closed = fluid_r(10.0, t, k, z);
            assert!(
                (exact - closed).abs() / closed < 0.02,
                "T={t} K={k} Z={z}: {exact} vs {closed}"
            );
        }
        assert!((fluid_r(7.0, 10.0, 1.0, 1.0) - monkey_leveling_r(7.0, 10.0)).abs() < 1e-15);
        assert!((fluid_r(7.0, 6.0, 5.0, 5.0) / monkey_tiering_r(7.0, 6.0) - 1.0).abs() < 1e-12);
    }

    #[test]
    fn low_memory_regime_drops_the_largest_filters() {
        let g = levels(10.0, 6, 1.0, 1.0, 1e8);
        let p = monkey_allocate(&g, 0.05 * 1e8);
        assert_eq!(*p.last().unwrap(), 1.0);
        assert!(p[0] < 1.0);
        // the closed low-memory form agrees on which levels go unfiltered and on R within a few percent
        let (r, y) = fluid_r_low_memory(0.05, 10.0, 1.0, 1.0);
        let unfiltered = p.iter().filter(|&&x| x >= 1.0).count() as u32;
        assert_eq!(y, unfiltered);
        let exact = fpr_sum(&g, &p);
        assert!((r - exact).abs() / exact < 0.05, "{r} vs {exact}");
        assert_eq!(monkey_allocate(&g, 0.0), vec![1.0; 6]);
    }
}

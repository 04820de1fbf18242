//! Properties over random designs: monotone in memory, finite everywhere.

use super::*;

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

    /// A lookup consults at most every run, and a miss every run the levels can hold.
    #[test]
    fn probes_bounded_by_the_runs(t in 3u64..20, k_frac in 0.0f64..1.0) {
        let k = 1 + ((t - 2) as f64 * k_frac) as u64;
        let w = workload(all_ops());
        let c = eval(&lsm(t, k, 1, 6.0), &w);
        let p = c.probes;
        prop_assert!(p.lookup.is_finite() && p.lookup >= 0.0, "{:?}", p);
        prop_assert!(p.lookup <= p.empty_lookup + 1.0, "{:?}", p);
        prop_assert!(p.empty_lookup <= (c.levels as u64 * k) as f64 + 1e-9, "{:?} {:?}", p, c.levels);
    }
}

//! Lookups: per-run sums in closed form, skew, the key-space spans of partially compacted levels, the entry
//! cache, "latest" reads.

use super::*;

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

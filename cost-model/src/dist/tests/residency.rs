//! Filters and residency: the bits a level's runs get, which runs keep their fences in memory, and the
//! phases of a cycle where a level outgrows them.

use super::*;

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
    let (tree, stored, filters, fences) = model.shaped_tree(&roomy, &w, &shape, &keys.parts_cow());
    let phases = cycle_phases(&tree, None, fences, filters, &stored, &model.quirks, true);
    assert!(phases.is_empty());
    // and a workload that does not write meets the load's tree, which does not cycle
    let (tree, stored, filters, fences) = model.shaped_tree(&d, &w, &shape, &keys.parts_cow());
    let phases = cycle_phases(&tree, None, fences, filters, &stored, &model.quirks, false);
    assert!(phases.is_empty());
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
    let runs = |bits: f64| explain_with(ReferenceQuirks::NONE, &lsm(18, 13, 1, bits), &w)[1].runs;
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

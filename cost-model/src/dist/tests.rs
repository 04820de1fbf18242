use super::lookup::{geometric, level_pass_uniform};
use super::residency::{cycle_phases, residency};
use super::shape::{build_tree, refilter};
use super::tree::scaled;
use super::write::mean_distinct;
use super::*;
use crate::keys::{distinct_after, exp_or_zero, KeySpace};
use crate::WorstCase;
use cosine_design::{Compaction, FilePicking, LogKind, RunStrategy};
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
    let (tree, stored, filters, fences) = model.shaped_tree(&roomy, &w, &shape, &keys.parts_cow());
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
            cosine_design::shape::hash_log_flush_entries(d.flush_bytes() as usize, 23, 1000) as f64;
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
        let run =
            cosine_design::simulate::run_over(&mut self.ids, self.run_bytes, 0, u64::MAX, self.cut);
        self.levels[0].insert(0, run);
        loop {
            let p = cosine_design::planner::plan(&self.levels, &self.policy);
            if p == cosine_design::planner::Plan::Nothing {
                return &self.levels;
            }
            self.levels = cosine_design::simulate::apply(&p, &self.levels, self.cut, &mut self.ids);
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
            cosine_design::shape::hash_log_flush_entries(d.flush_bytes() as usize, 23, 1000) as f64;
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

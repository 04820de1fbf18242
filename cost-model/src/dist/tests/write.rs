//! Writes: what flushes and compactions read and write per write, level by level.

use super::*;

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

use super::*;
use cosine_cost_model::DistributionAware;
use cosine_design::{named_workload, OperationMix};

fn shard<'a>(w: Workload, phi: &'a PhiLibrary, memory: u64) -> Shard<'a> {
    Shard {
        keys: Arc::new(KeySpace::from_workload(&w)),
        workload: w,
        memory_bytes: memory,
        machine: Machine {
            vcpus: 4,
            iops: 10_000.0,
            mibps: 500.0,
            read_latency_s: 1e-3,
            in_flight: 4.0,
            page_cache_bytes: 0.0,
        },
        block_bytes: 16 << 10,
        phi,
        cpu: learned_cpu(),
        throughput: ThroughputModel::Physical,
        max_recovery_s: DEFAULT_MAX_RECOVERY_S,
        rho: None,
        epsilon: 0.1,
        system_phi: None,
        system_cpu: None,
        quirks: ReferenceQuirks::NONE,
        lsh_engine: LshEngine::Cosine,
        scored: None,
        memo: None,
    }
}

#[test]
fn best_design_is_valid_and_beats_fixed_shapes() {
    let phi = PhiLibrary::default();
    let mut w = named_workload("ycsb-a").unwrap();
    w.entries = 10_000_000;
    let s = shard(w, &phi, 2 << 30);
    let best = s.best().unwrap();
    best.design.validate().unwrap();
    assert!(best.design.memory_bytes() <= 2 << 30);
    let rocks = s
        .lsm_design(10, 1, 1, 1 << 30)
        .and_then(|d| s.score(d))
        .unwrap();
    assert!(best.latency_s <= rocks.latency_s);
}

#[test]
fn a_shared_grid_gives_what_a_fresh_search_gives() {
    // two VM types of one memory size share the priced grid; each must still find its own best design
    let phi = PhiLibrary::default();
    let mut w = named_workload("ycsb-a").unwrap();
    w.entries = 20_000_000;
    let memo = EvalMemo::default();
    let mut first = shard(w.clone(), &phi, 4 << 30);
    first.machine.vcpus = 2;
    first.machine.iops = 3_000.0;
    first.memo = Some(&memo);
    let _ = first.best();
    let priced = memo.priced();
    assert!(priced > 0);
    for (vcpus, iops) in [(2, 3_000.0), (16, 3_000.0), (4, 60_000.0)] {
        let mut fresh = shard(w.clone(), &phi, 4 << 30);
        fresh.machine.vcpus = vcpus;
        fresh.machine.iops = iops;
        let mut shared = fresh.clone();
        shared.memo = Some(&memo);
        assert_eq!(shared.best(), fresh.best(), "{vcpus} cores, {iops} IOPS");
        let some = [Shape::Lsm { t: 8, k: 1, z: 1 }, Shape::Btree { t: 8 }];
        assert_eq!(shared.best_among(&some), fresh.best_among(&some));
    }
    // the grid was priced once: the other VMs only priced their refinements
    assert!(
        memo.priced() < 2 * priced,
        "{} after {priced}",
        memo.priced()
    );
}

#[test]
fn the_lsh_designs_size_ratio_and_last_level_are_searched() {
    // YCSB-A's 10^10 entries over 25 VMs of 52 GiB: at T₀ = 19 (the load's 18 flushes fill the first
    // level's runs) the updates' runs keep up to 18 runs a level, most of its 1.11 I/Os an operation its
    // scans' seeks into them (38 blocks a scan); half of T₀ (T = 10, tiered) merges the log more often and
    // keeps fewer runs (0.27)
    let phi = PhiLibrary::default();
    let mut w = named_workload("ycsb-a").unwrap();
    w.entries = 400_000_000;
    w.operations /= 25;
    w.mix = crate::continuum::noisy_mix(&w.mix, 0.1);
    let mut s = shard(w, &phi, 52 << 30);
    // (the log's whole memory its buffer: no recovery bound cuts it here)
    s.max_recovery_s = f64::INFINITY;
    let first = s.score(s.lsh_design().unwrap()).unwrap();
    let ((divisor, tiered), best) = s.best_lsh().unwrap();
    assert!(
        best.io_per_op < 0.5 * first.io_per_op,
        "{} against {}",
        best.io_per_op,
        first.io_per_op
    );
    assert!(divisor > 1);
    assert_eq!(best.design.cold_runs == 1, !tiered);
    assert_eq!(best.class, DesignClass::Lsh);
}

#[test]
fn the_lsh_design_runs_and_is_priced_as_an_lsh_whatever_its_size_ratio() {
    // 1.1e9 entries of 1 KiB in 32 GiB: T = 109, at or below the 128 entries of ASSUMED_ENTRY_BYTES a
    // 16 KiB block, where a design without a recorded class runs as a B-tree with 116 unfiltered runs a
    // level (priced at 12 I/Os a lookup before the class was recorded)
    let phi = PhiLibrary::default();
    let mut w = named_workload("ycsb-a").unwrap();
    w.entries = 1_100_000_000;
    let mut s = shard(w, &phi, 32 << 30);
    // (the log's whole memory its buffer: no recovery bound cuts it here)
    s.max_recovery_s = f64::INFINITY;
    let d = s.lsh_design().unwrap();
    assert!(d.size_ratio <= 16 * 1024 / cosine_design::ASSUMED_ENTRY_BYTES);
    assert!(d.runs_as_lsh());
    let scored = s.score(d).unwrap();
    assert_eq!(scored.class, DesignClass::Lsh);
    assert!(scored.io_per_op < 1.0, "{}", scored.io_per_op);
}

#[test]
fn the_faster_baseline_prices_faster_s_read_path_memory_and_scans() {
    // YCSB-C at the peer run's scale (1.8 M records of 1 KB, 256 MiB, 4 KiB blocks), no noise: FASTER's
    // log pages hold the load's newest records (a uniform share, whichever keys the reads favour), and a
    // lookup that leaves memory reads the record's header sector, then the rest of the 1 KB record: about
    // 2 reads a lookup (measured: 2.0 KiB a lookup in reads of 512 B and 1.5 KiB; the authors' calibrated
    // model priced 0.34)
    let phi = PhiLibrary::default();
    let mut w = named_workload("ycsb-c").unwrap();
    w.entries = 1_800_000;
    w.key_bytes = 24;
    w.value_bytes = 1000;
    let mut ours = shard(w.clone(), &phi, 256 << 20);
    ours.block_bytes = 4096;
    let mut faster = ours.clone();
    faster.quirks = Baseline::Faster.model_quirks();
    faster.lsh_engine = Baseline::Faster.lsh_engine();
    let d = faster.baseline_design(Baseline::Faster).unwrap();
    let io = |s: &Shard, d: &Design| s.score(d.clone()).unwrap().io_per_op;
    let (o, f) = (io(&ours, &d), io(&faster, &d));
    let in_memory = d.buffer_bytes as f64 / (1.8e6 * 1024.0);
    assert!((f - 2.0 * (1.0 - in_memory)).abs() < 0.01, "{f}");
    // our engine's read-only region is half of M_B: more of its lookups reach the disk, one block each
    assert!(o > 0.85 && o < 1.0 && f > 1.7 * o, "{o} against {f}");
    // a scan of s keys is s lookups: FASTER has no ordered scan
    let mut e = named_workload("ycsb-e").unwrap();
    e.entries = 1_800_000;
    let mut scans = faster.clone();
    scans.workload = e.clone();
    scans.keys = Arc::new(KeySpace::from_workload(&e));
    let c = DistributionAware {
        lsh_engine: LshEngine::Faster,
        ..Default::default()
    }
    .evaluate_with_keys(&d, &e, &scans.keys)
    .unwrap();
    assert_eq!(c.per_op.long_scan, e.scan_length as f64 * c.per_op.lookup);
    assert_eq!(c.per_op.empty_lookup, 0.0);
}

#[test]
fn spanning_shapes_cover_the_size_ratios_between_and_one_beyond() {
    let s = Shape::spanning(&[
        Shape::Lsm { t: 8, k: 1, z: 1 },
        Shape::Lsm { t: 16, k: 1, z: 1 },
        Shape::Btree { t: 8 },
    ]);
    let lsm: Vec<u64> = s
        .iter()
        .filter_map(|x| match x {
            Shape::Lsm { t, .. } => Some(*t),
            _ => None,
        })
        .collect();
    assert_eq!(lsm, vec![6, 8, 10, 12, 16, 24]);
    assert!(s.contains(&Shape::Btree { t: 4 }) && s.contains(&Shape::Btree { t: 16 }));
    // the rule for K follows the size ratio: T − 1 runs at every T
    let tiered = Shape::spanning(&[Shape::Lsm { t: 4, k: 3, z: 1 }]);
    assert_eq!(
        tiered,
        vec![
            Shape::Lsm { t: 3, k: 2, z: 1 },
            Shape::Lsm { t: 4, k: 3, z: 1 },
            Shape::Lsm { t: 6, k: 5, z: 1 }
        ]
    );
}

#[test]
fn baselines_have_table_1_shapes() {
    let phi = PhiLibrary::default();
    let mut w = named_workload("ycsb-a").unwrap();
    w.entries = 100_000_000;
    let s = shard(w, &phi, 64 << 30);
    let r = s.baseline_design(Baseline::RocksDb).unwrap();
    assert_eq!(
        (r.size_ratio, r.hot_runs, r.cold_runs, r.class),
        (10, 1, 1, Some(DesignClass::Lsm))
    );
    assert!((r.filter_bytes as f64 - 1e8 * 10.0 / 8.0).abs() < 2.0);
    let wt = s.baseline_design(Baseline::WiredTiger).unwrap();
    assert_eq!(
        (wt.size_ratio, wt.filter_bytes, wt.class),
        (32, 0, Some(DesignClass::Btree))
    );
    let f = s.baseline_design(Baseline::Faster).unwrap();
    assert_eq!((f.filter_bytes, f.class), (0, Some(DesignClass::Lsh)));
    assert_eq!(f.hot_runs, f.size_ratio - 1);
    // FASTER's index is in memory for every key, as our engine's is: the same memory split as our LSH
    // design at T₀ (FASTER's log has no levels; its size ratio does not price it)
    assert_eq!(Some(f), s.lsh_design());
    // RocksDB cannot run where its filters and fences alone exceed memory
    assert!(shard(named_workload("ycsb-a").unwrap(), &phi, 1 << 30)
        .baseline_design(Baseline::RocksDb)
        .is_none());
}

#[test]
fn write_heavy_prefers_write_optimised_and_ranges_prefer_few_runs() {
    let phi = PhiLibrary::default();
    let mut writes = Workload::with_mix(OperationMix {
        insert: 0.95,
        lookup: 0.05,
        ..Default::default()
    });
    writes.entries = 50_000_000;
    let w = shard(writes, &phi, 1 << 30).best().unwrap();
    let mut ranges = Workload::with_mix(OperationMix {
        scan: 0.9,
        insert: 0.1,
        ..Default::default()
    });
    ranges.entries = 50_000_000;
    ranges.scan_length = 1000;
    let r = shard(ranges, &phi, 1 << 30).best().unwrap();
    assert!(
        w.design.hot_runs > 1 || w.class == DesignClass::Lsh,
        "write-heavy got {:?}",
        w.design
    );
    assert!(
        r.design.hot_runs == 1 || r.class == DesignClass::Btree,
        "range-heavy got {:?}",
        r.design
    );
}

#[test]
fn no_design_the_search_returns_takes_longer_to_recover_than_the_bound() {
    // 64 GiB at 125 MiB/s (a gp3 volume's baseline): the whole memory as a buffer would take minutes to replay
    let phi = PhiLibrary::default();
    let mut w = named_workload("ycsb-a").unwrap();
    w.entries = 400_000_000;
    let mut s = shard(w, &phi, 64 << 30);
    s.machine.mibps = 125.0;
    let best = s.best().unwrap();
    assert!(
        best.recovery_s <= s.max_recovery_s * (1.0 + 1e-9),
        "{}",
        best.recovery_s
    );
    assert!(best.design.buffer_bytes <= s.buffer_ceiling());
    assert!(s.buffer_ceiling() < 16 << 30, "{}", s.buffer_ceiling());
    let lsh = s.lsh_design().unwrap();
    assert!(s.recovery_s(&lsh) <= s.max_recovery_s);
    // a design that would not recover in time is not scored
    let mut whole = best.design.clone();
    whole.buffer_bytes = 60 << 30;
    whole.cache_bytes = 0;
    assert!(s.recovery_s(&whole) > s.max_recovery_s);
    assert!(s.score(whole).is_none());
    // and a shorter bound gives a smaller ceiling
    let mut strict = s.clone();
    strict.max_recovery_s = 5.0;
    assert!(strict.buffer_ceiling() < s.buffer_ceiling());
}

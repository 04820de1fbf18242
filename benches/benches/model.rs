//! Model speed: one design's evaluation (nanoseconds) and one nominal / robust Endure tuning.

use cosine_cost_model::endure::EndureSystem;
use cosine_cost_model::{DistributionAware, IoModel, WorstCase};
use cosine_design::{named_workload, Design, OperationMix, Workload, ENDURE_EXPECTED};
use cosine_search::tuning::TuneProblem;
use criterion::{black_box, criterion_group, criterion_main, Criterion};

fn evaluation(c: &mut Criterion) {
    let mut uniform = Workload::with_mix(OperationMix {
        lookup: 0.5,
        insert: 0.5,
        ..Default::default()
    });
    uniform.entries = 100_000_000;
    let lsm = Design::rocksdb_like(64 << 20, 125_000_000, 3_200_000_000);
    let tiered = Design::tiered(8, 64 << 20, 125_000_000, 3_200_000_000);
    let zipf = named_workload("ycsb-a").unwrap();
    let model = DistributionAware::new();
    let mut g = c.benchmark_group("evaluate");
    g.bench_function("distribution-aware/leveled/uniform", |b| {
        b.iter(|| {
            model
                .evaluate(black_box(&lsm), black_box(&uniform))
                .unwrap()
        })
    });
    g.bench_function("distribution-aware/tiered-T8/uniform", |b| {
        b.iter(|| {
            model
                .evaluate(black_box(&tiered), black_box(&uniform))
                .unwrap()
        })
    });
    g.bench_function("distribution-aware/leveled/ycsb-a-zipf", |b| {
        b.iter(|| model.evaluate(black_box(&lsm), black_box(&zipf)).unwrap())
    });
    let keys = cosine_cost_model::keys::KeySpace::from_workload(&zipf);
    g.bench_function("distribution-aware/leveled/ycsb-a-zipf-prepared", |b| {
        b.iter(|| {
            model
                .evaluate_with_keys(black_box(&lsm), black_box(&zipf), &keys)
                .unwrap()
        })
    });
    g.bench_function("worst-case/leveled", |b| {
        b.iter(|| {
            WorstCase
                .evaluate(black_box(&lsm), black_box(&uniform))
                .unwrap()
        })
    });
    g.finish();
}

fn tuning(c: &mut Criterion) {
    let sys = EndureSystem::default();
    let mut g = c.benchmark_group("tune");
    let nominal = TuneProblem::new(sys, ENDURE_EXPECTED[11], 0.0).unwrap();
    let robust = TuneProblem::new(sys, ENDURE_EXPECTED[11], 1.0).unwrap();
    g.bench_function("nominal/endure-w11", |b| {
        b.iter(|| black_box(&nominal).solve())
    });
    g.bench_function("robust-rho1/endure-w11", |b| {
        b.iter(|| black_box(&robust).solve())
    });
    g.finish();
}

criterion_group!(benches, evaluation, tuning);
criterion_main!(benches);

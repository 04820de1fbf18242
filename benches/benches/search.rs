//! The main job's speed: the full three-provider continuum for YCSB-A at $20,000/month (today's catalog and
//! the paper's), including the fixed-design baselines.

use cosine_cost_model::cpu::PhiLibrary;
use cosine_design::named_workload;
use cosine_search::continuum::{search, SearchOptions};
use criterion::{black_box, criterion_group, criterion_main, Criterion};

fn continuum(c: &mut Criterion) {
    let w = named_workload("ycsb-a").unwrap();
    let phi = PhiLibrary::default();
    let mut g = c.benchmark_group("search");
    g.sample_size(10);
    for catalog in ["current", "paper"] {
        let cat = cosine_cloud_pricing::load(catalog).unwrap();
        let opts = SearchOptions::new(20_000.0);
        let r = search(&cat, &w, &phi, &opts);
        eprintln!(
            "{catalog}: {} configurations, {} designs scored, {} VM types, frontier of {} points",
            r.counts.configurations,
            r.counts.designs,
            r.counts.vm_types,
            r.frontier.len()
        );
        g.bench_function(format!("ycsb-a/$20000/{catalog}"), |b| {
            b.iter(|| search(black_box(&cat), &w, &phi, &opts))
        });
    }
    g.finish();
}

criterion_group!(benches, continuum);
criterion_main!(benches);

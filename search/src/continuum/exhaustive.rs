//! The search checked against an exhaustive one over the same space on a small catalog: every VM type at every
//! count and every pair of types at every pair of counts, each shard given the full design search (no re-fitted
//! templates, no estimate deciding which mixes to score). "Best" must mean best, not best found.

use super::ctx::{Ctx, Search, ShardMemo};
use super::*;
use crate::designs::Tally;
use cosine_design::named_workload;

/// The frontier of every configuration of up to `opts.max_vms` VMs of one or two types of `provider`.
fn exhaustive_frontier(
    catalog: &Catalog,
    provider: &Provider,
    workload: &Workload,
    phi: &PhiLibrary,
    opts: &SearchOptions,
) -> Vec<Config> {
    let designs = Tally::default();
    let memo = EvalMemo::default();
    let ctx = Ctx {
        catalog,
        provider,
        workload,
        phi,
        opts,
        designs: &designs,
        memo: &memo,
        shards: &ShardMemo::default(),
    };
    let types = undominated(provider);
    let mut all = Vec::new();
    for &i in &types {
        for c in 1..=opts.max_vms {
            all.extend(ctx.score(&[(i, c)], &[Search::Full]));
        }
    }
    for (x, &a) in types.iter().enumerate() {
        for &b in &types[x + 1..] {
            for ca in 1..opts.max_vms {
                for cb in 1..=(opts.max_vms - ca) {
                    all.extend(ctx.score(&[(a, ca), (b, cb)], &[Search::Full, Search::Full]));
                }
            }
        }
    }
    frontier(all)
}

/// The fastest latency a frontier offers at or below `cost`.
fn latency_at(f: &[Config], cost: f64) -> f64 {
    best_within(f, cost + 1e-9).map_or(f64::INFINITY, |c| c.latency_s)
}

fn small_catalog() -> Catalog {
    let mut catalog = cosine_cloud_pricing::paper();
    catalog.providers.retain(|p| p.id == "aws");
    let aws = &mut catalog.providers[0];
    let keep: Vec<usize> = undominated(aws).into_iter().take(4).collect();
    let mut i = 0;
    aws.vms.retain(|_| {
        i += 1;
        keep.contains(&(i - 1))
    });
    catalog
}

fn check(name: &str, entries: u64) {
    let catalog = small_catalog();
    let provider = &catalog.providers[0];
    let mut w = named_workload(name).unwrap();
    w.entries = entries;
    let phi = PhiLibrary::default();
    let mut opts = SearchOptions::new(5_000.0);
    opts.providers = vec!["aws".into()];
    opts.max_vms = 6;
    let mut counts = SearchCounts::default();
    let fast = frontier(provider_configs(
        &catalog,
        provider,
        &w,
        &phi,
        &opts,
        &mut counts,
    ));
    let full = exhaustive_frontier(&catalog, provider, &w, &phi, &opts);
    assert!(!full.is_empty());
    for c in &full {
        let got = latency_at(&fast, c.monthly_usd());
        assert!(
            got <= c.latency_s * (1.0 + 1e-9),
            "{name}, {entries} entries: at ${:.2} the search offers {got} s, the exhaustive search {} s ({}: {:?}) vs {:?}",
            c.monthly_usd(),
            c.latency_s,
            c.describe(),
            c.parts.iter().map(|p| (p.design.design.size_ratio, p.design.design.hot_runs, p.design.design.cold_runs, p.design.design.buffer_bytes)).collect::<Vec<_>>(),
            best_within(&fast, c.monthly_usd() + 1e-9).map(|f| (f.describe(), f.parts.iter().map(|p| (p.design.design.size_ratio, p.design.design.hot_runs, p.design.design.cold_runs, p.design.design.buffer_bytes)).collect::<Vec<_>>()))
        );
    }
    // and every point the search offers is what the model gives its designs, each priced afresh on its
    // shard (a shard between searched sizes may find a design the whole search does not walk: the
    // exhaustive frontier is a bar to clear, not a ceiling)
    let designs = Tally::default();
    let memo = EvalMemo::default();
    let ctx = Ctx {
        catalog: &catalog,
        provider,
        workload: &w,
        phi: &phi,
        opts: &opts,
        designs: &designs,
        memo: &memo,
        shards: &ShardMemo::default(),
    };
    for c in &fast {
        let vm = |p: &Part| provider.vms.iter().position(|v| v.name == p.vm).unwrap();
        let total: f64 = c
            .parts
            .iter()
            .map(|p| provider.vms[vm(p)].memory_bytes as f64 * p.count as f64)
            .sum();
        let latency = c
            .parts
            .iter()
            .map(|p| {
                let i = vm(p);
                let entries = w.entries as f64 * provider.vms[i].memory_bytes as f64 / total;
                let volume = super::ctx::Volume {
                    iops: p.iops,
                    mibps: p.mibps,
                };
                let mut shard = ctx.shard(i, entries, volume);
                shard.memo = None;
                shard.score(p.design.design.clone()).unwrap().latency_s
            })
            .fold(0.0, f64::max);
        assert!(
            (latency - c.latency_s).abs() <= 1e-9 * c.latency_s,
            "{name}: {} priced {latency} s afresh, {} s by the search",
            c.describe(),
            c.latency_s
        );
    }
}

#[test]
fn the_frontier_is_the_exhaustive_frontier_for_ycsb_a() {
    check("ycsb-a", 200_000_000);
}

#[test]
fn the_frontier_is_the_exhaustive_frontier_for_ycsb_c() {
    check("ycsb-c", 50_000_000);
}

#[test]
fn the_frontier_is_the_exhaustive_frontier_for_ycsb_e() {
    check("ycsb-e", 200_000_000);
}

#[test]
fn the_frontier_is_the_exhaustive_frontier_for_a_write_heavy_endure_workload() {
    check("endure-w11", 1_000_000_000);
}

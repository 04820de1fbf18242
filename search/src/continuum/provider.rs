//! A provider's configurations: the homogeneous ones (anchors searched fully, the counts between seeded
//! from them) and the mixes of two types a bound does not rule out; a fixed system's continuum.

use crate::continuum::config::{best_within, frontier, Config};
use crate::continuum::ctx::{Ctx, Search, ShardMemo, Volume};
use crate::continuum::hardware::{anchor_counts, searched, undominated};
use crate::continuum::{SearchCounts, SearchOptions};
use crate::designs::{Baseline, EvalMemo, Shape, Tally, Template};
use cosine_cloud_pricing::{Catalog, Provider};
use cosine_cost_model::cpu::PhiLibrary;
use cosine_design::Workload;
use rayon::prelude::*;

/// A fixed system's continuum over every provider searched (homogeneous configurations: the system decides the
/// design, only the hardware varies).
pub fn baseline_frontier(
    catalog: &Catalog,
    workload: &Workload,
    phi: &PhiLibrary,
    opts: &SearchOptions,
    system: Baseline,
) -> Vec<Config> {
    baseline_frontier_in(catalog, workload, phi, opts, system, &EvalMemo::default())
}

pub(super) fn baseline_frontier_in(
    catalog: &Catalog,
    workload: &Workload,
    phi: &PhiLibrary,
    opts: &SearchOptions,
    system: Baseline,
    memo: &EvalMemo,
) -> Vec<Config> {
    let designs = Tally::default();
    let mut all = Vec::new();
    for provider in searched(catalog, opts) {
        let ctx = Ctx {
            catalog,
            provider,
            workload,
            phi,
            opts,
            designs: &designs,
            memo,
            shards: &ShardMemo::default(),
        };
        let configs: Vec<Config> = undominated(provider)
            .par_iter()
            .flat_map_iter(|&i| (1..=opts.max_vms).map(move |c| (i, c)))
            .filter_map(|(i, c)| ctx.score_baseline(i, c, system))
            .collect();
        all.extend(configs);
    }
    frontier(all)
}

/// All configurations worth considering for one provider, scored.
pub fn provider_configs(
    catalog: &Catalog,
    provider: &Provider,
    workload: &Workload,
    phi: &PhiLibrary,
    opts: &SearchOptions,
    counts: &mut SearchCounts,
) -> Vec<Config> {
    provider_configs_in(
        catalog,
        provider,
        workload,
        phi,
        opts,
        counts,
        &EvalMemo::default(),
    )
}

pub(super) fn provider_configs_in(
    catalog: &Catalog,
    provider: &Provider,
    workload: &Workload,
    phi: &PhiLibrary,
    opts: &SearchOptions,
    counts: &mut SearchCounts,
    memo: &EvalMemo,
) -> Vec<Config> {
    let designs = Tally::default();
    let ctx = Ctx {
        catalog,
        provider,
        workload,
        phi,
        opts,
        designs: &designs,
        memo,
        shards: &ShardMemo::default(),
    };
    let types = undominated(provider);
    counts.vm_types += types.len();
    let anchors = anchor_counts(opts.max_vms);
    let (mut configs, tops) = homogeneous(&ctx, &types, &anchors);
    let mixed = mixes(&ctx, &configs, &anchors, &tops);
    configs.extend(mixed);
    counts.configurations += configs.len();
    counts.designs += designs.get();
    configs
}

/// Mixed configurations scored in parallel between updates of the fastest one found.
pub(super) const MIX_CHUNK: usize = 32;

/// Shapes taken from each neighbouring anchor for a shard between anchors.
pub const REFIT_SHAPES: usize = 3;

/// The fastest shapes of each anchor's whole grid, by (VM type, count).
type Tops = std::collections::HashMap<(usize, u32), Vec<Shape>>;

/// The homogeneous configurations of `types` at every count: full design searches at the anchor counts, the
/// counts between searching the shapes that came first at the anchors around them; with the anchors' fastest
/// shapes.
fn homogeneous(ctx: &Ctx, types: &[usize], anchors: &[u32]) -> (Vec<Config>, Tops) {
    let (workload, opts) = (ctx.workload, ctx.opts);
    // full design searches at the anchor counts
    let anchor_results: Vec<((usize, u32), Option<Config>)> = types
        .par_iter()
        .flat_map_iter(|&i| anchors.iter().map(move |&c| (i, c)))
        .map(|(i, c)| ((i, c), ctx.score(&[(i, c)], &[Search::Full])))
        .collect();
    // the other counts search the shapes that came first at the anchors around them
    let tops: Tops = types
        .par_iter()
        .flat_map_iter(|&i| anchors.iter().map(move |&a| (i, a)))
        .filter_map(|(i, a)| Some(((i, a), ctx.top_shapes(i, a, REFIT_SHAPES)?)))
        .collect();
    let rest: Vec<Config> = types
        .par_iter()
        .flat_map_iter(|&i| {
            (1..=opts.max_vms)
                .filter(|c| !anchors.contains(c))
                .map(move |c| (i, c))
        })
        .filter_map(|(i, c)| {
            let shapes = ctx.shapes_between(i, workload.entries as f64 / c as f64, anchors, &tops);
            ctx.score(&[(i, c)], &[shapes])
        })
        .collect();
    let configs: Vec<Config> = anchor_results
        .iter()
        .filter_map(|(_, r)| r.clone())
        .chain(rest)
        .collect();
    (configs, tops)
}

/// Mixed configurations of two types on the homogeneous frontier of `configs`, where an estimate says they may
/// help: each mix's shards search what the homogeneous shards of their types just smaller and larger settled
/// on, and a mix is scored only where a lower bound on its latency does not rule it out.
fn mixes(ctx: &Ctx, configs: &[Config], anchors: &[u32], tops: &Tops) -> Vec<Config> {
    let (provider, workload, opts) = (ctx.provider, ctx.workload, ctx.opts);
    // mixed configurations of two types on the homogeneous frontier, where an estimate says they may help
    let homogeneous = frontier(configs.to_vec());
    let mut on_frontier: Vec<usize> = Vec::new();
    for c in &homogeneous {
        if let Some(i) = provider.vms.iter().position(|v| v.name == c.parts[0].vm) {
            if !on_frontier.contains(&i) {
                on_frontier.push(i);
            }
        }
    }
    on_frontier.truncate(6);
    // per VM type: its homogeneous configurations' shards by size, each with its latency, volume and buffer
    // ceiling
    let mut by_type: Vec<Vec<Homogeneous>> = vec![Vec::new(); provider.vms.len()];
    for c in configs.iter().filter(|c| c.parts.len() == 1) {
        if let Some(i) = provider.vms.iter().position(|v| v.name == c.parts[0].vm) {
            let p = &c.parts[0];
            let volume = Volume {
                iops: p.iops,
                mibps: p.mibps,
            };
            let entries = p.entries_per_vm as f64;
            by_type[i].push(Homogeneous {
                entries,
                latency_s: c.latency_s,
                volume,
                ceiling: ctx.shard(i, entries, volume).buffer_ceiling(),
            });
        }
    }
    for v in &mut by_type {
        v.sort_by(|a, b| a.entries.total_cmp(&b.entries));
    }
    // per VM type: what its homogeneous shards' design searches settled on, by shard size
    let mut settled: Vec<Vec<(f64, Template)>> = vec![Vec::new(); provider.vms.len()];
    for c in configs.iter().filter(|c| c.parts.len() == 1) {
        if let Some(i) = provider.vms.iter().position(|v| v.name == c.parts[0].vm) {
            let p = &c.parts[0];
            if let Some(t) = p.design.template {
                settled[i].push((p.entries_per_vm as f64, t));
            }
        }
    }
    for v in &mut settled {
        v.sort_by(|a, b| a.0.total_cmp(&b.0));
    }
    // A mix's shard of type i holding `entries` tries what the searches of the homogeneous shards of its type
    // just smaller and just larger settled on (the one nearest where it is smaller or larger than all).
    let search_between = |i: usize, entries: f64| -> Search {
        let v = &settled[i];
        let k = v.partition_point(|h| h.0 < entries);
        let mut few: Vec<Template> = Vec::new();
        for h in v.get(k.wrapping_sub(1)).into_iter().chain(v.get(k)) {
            if !few.contains(&h.1) {
                few.push(h.1);
            }
        }
        if few.is_empty() {
            ctx.shapes_between(i, entries, anchors, tops)
        } else if k == 0 || k == v.len() {
            // smaller or larger than every homogeneous shard of its type: nothing to interpolate between, and
            // one side's template can miss a design that only pays at this size (a 111 M-entry shard of
            // endure-w11 went from a B-tree to a leveled LSM-tree with an entry cache, 1.46x faster): the whole
            // search too
            Search::FullAndTemplates(few)
        } else {
            Search::Templates(few)
        }
    };
    // A lower bound on the latency of a VM of type i holding `entries` on `volume`: the homogeneous shard of that
    // type just smaller, scaled to this shard's operations (its I/Os per operation can only be higher on more
    // entries: `io_never_falls_as_entries_grow`, and so its requests, bytes, CPU and time in flight) and to this
    // volume's IOPS and bandwidth where they are higher (the cores and the requests in flight are the type's).
    // 0 without a smaller one, or where the two shards' buffer ceilings differ (their designs are not the same
    // set).
    let latency_bound = |i: usize, entries: f64, volume: Volume| -> f64 {
        let Some(h) = by_type[i]
            .iter()
            .rev()
            .find(|h| h.entries <= entries && h.entries > 0.0)
        else {
            return 0.0;
        };
        if ctx.shard(i, entries, volume).buffer_ceiling() != h.ceiling {
            return 0.0;
        }
        let faster = (h.volume.iops / volume.iops)
            .min(h.volume.mibps / volume.mibps)
            .min(1.0);
        h.latency_s * entries / h.entries * faster
    };
    let mut pairs = Vec::new();
    for (x, &a) in on_frontier.iter().enumerate() {
        for &b in &on_frontier[x + 1..] {
            for ca in 1..opts.max_vms {
                for cb in 1..=(opts.max_vms - ca) {
                    pairs.push(((a, ca), (b, cb)));
                }
            }
        }
    }
    // the mixes in the cost range, cheapest first, each with a lower bound on its latency
    let mem = |i: usize| provider.vms[i].memory_bytes as f64;
    let n = workload.entries as f64;
    // (monthly cost, lower bound on latency, the type to search first, the two types and counts)
    type Mix = (f64, f64, usize, (usize, u32), (usize, u32));
    let mut candidates: Vec<Mix> = pairs
        .par_iter()
        .filter_map(|&((a, ca), (b, cb))| {
            let q = ctx.price(&[(a, ca), (b, cb)])?;
            let total = mem(a) * ca as f64 + mem(b) * cb as f64;
            let bound_a = latency_bound(a, n * mem(a) / total, Volume::of(&q, 0));
            let bound_b = latency_bound(b, n * mem(b) / total, Volume::of(&q, 1));
            // the type more likely to reach the limit is searched first
            let first = usize::from(bound_b > bound_a);
            Some((q.total_usd, bound_a.max(bound_b), first, (a, ca), (b, cb)))
        })
        .collect();
    candidates.sort_by(|x, y| x.0.total_cmp(&y.0));
    // those the homogeneous configurations alone do not rule out
    candidates.retain(|&(cost, bound, ..)| {
        best_within(&homogeneous, cost).is_none_or(|h| bound < h.latency_s)
    });
    // Scored a chunk at a time: a mix is skipped when its bound shows it cannot beat a configuration of at
    // most its cost already scored (homogeneous, or a cheaper mix), so it could not be on the frontier.
    let mut mixed: Vec<Config> = Vec::new();
    let mut fastest_mix = f64::INFINITY;
    for chunk in candidates.chunks(MIX_CHUNK) {
        let scored: Vec<Config> = chunk
            .par_iter()
            .filter_map(|&(cost, bound, first, (a, ca), (b, cb))| {
                let to_beat = best_within(&homogeneous, cost)
                    .map_or(f64::INFINITY, |h| h.latency_s)
                    .min(fastest_mix);
                if bound >= to_beat {
                    return None;
                }
                let total = mem(a) * ca as f64 + mem(b) * cb as f64;
                let sa = search_between(a, n / total * mem(a));
                let sb = search_between(b, n / total * mem(b));
                ctx.score_below(&[(a, ca), (b, cb)], &[sa, sb], to_beat, &[first])
            })
            .collect();
        for c in scored {
            fastest_mix = fastest_mix.min(c.latency_s);
            mixed.push(c);
        }
    }
    mixed
}

/// A homogeneous configuration's shard, as the mixes' lower bound reads it.
#[derive(Clone, Copy, Debug)]
struct Homogeneous {
    entries: f64,
    latency_s: f64,
    volume: Volume,
    ceiling: u64,
}

/// What the search weighs for one VM of type `vm` of `provider` holding the whole workload (`cosine verify` on a
/// machine of one's own): the pick and the next designs by the model's time, each shape once, `n` in all, and
/// each fixed system's design, each priced on that VM.
pub fn one_vm_designs(
    catalog: &Catalog,
    provider: &Provider,
    vm: usize,
    workload: &Workload,
    phi: &PhiLibrary,
    opts: &SearchOptions,
    n: usize,
) -> Option<OneVm> {
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
    let q = ctx.price(&[(vm, 1)])?;
    let volume = Volume::of(&q, 0);
    let entries = workload.entries as f64;
    let shard = ctx.shard(vm, entries, volume);
    let ranked = shard.ranked_designs(n);
    let baselines = Baseline::ALL
        .iter()
        .map(|&b| {
            (
                b,
                ctx.score_baseline(vm, 1, b)
                    .map(|c| c.parts[0].design.clone()),
            )
        })
        .collect();
    let part = |design| ctx.part(vm, 1, entries, volume, design);
    Some(OneVm {
        designs: ranked.into_iter().map(part).collect(),
        baselines,
    })
}

/// [`one_vm_designs`]' answer.
#[derive(Clone, Debug, serde::Serialize)]
pub struct OneVm {
    /// The pick, then the next designs, each as the VM that runs it.
    pub designs: Vec<crate::continuum::Part>,
    /// Each fixed system's design on the VM (None where it cannot run there).
    pub baselines: Vec<(Baseline, Option<crate::designs::Scored>)>,
}

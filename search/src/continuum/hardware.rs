//! The hardware space: the providers searched, the VM types no other dominates, the anchor counts given a
//! full design search, and their grids priced up front.

use crate::continuum::ctx::{Ctx, ShardMemo};
use crate::continuum::SearchOptions;
use crate::designs::{EvalMemo, Tally};
use cosine_cloud_pricing::{Catalog, Provider};
use cosine_cost_model::cpu::PhiLibrary;
use cosine_design::Workload;
use rayon::prelude::*;

/// The catalog's providers that `opts` searches.
pub(super) fn searched<'c>(
    catalog: &'c Catalog,
    opts: &SearchOptions,
) -> impl Iterator<Item = &'c Provider> {
    let ids = opts.providers.clone();
    catalog
        .providers
        .iter()
        .filter(move |p| ids.contains(&p.id))
}

/// The VM types of a provider that no other type dominates.
pub fn undominated(p: &Provider) -> Vec<usize> {
    let v = &p.vms;
    let cap = |x: Option<f64>| x.unwrap_or(f64::INFINITY);
    (0..v.len())
        .filter(|&i| {
            !(0..v.len()).any(|j| {
                j != i
                    && v[j].memory_bytes >= v[i].memory_bytes
                    && v[j].vcpus >= v[i].vcpus
                    && v[j].hourly_usd <= v[i].hourly_usd
                    && cap(v[j].max_disk_iops) >= cap(v[i].max_disk_iops)
                    && cap(v[j].max_disk_mibps) >= cap(v[i].max_disk_mibps)
                    && (v[j].memory_bytes > v[i].memory_bytes
                        || v[j].vcpus > v[i].vcpus
                        || v[j].hourly_usd < v[i].hourly_usd
                        || (v[j].memory_bytes == v[i].memory_bytes
                            && v[j].vcpus == v[i].vcpus
                            && v[j].hourly_usd == v[i].hourly_usd
                            && j < i))
            })
        })
        .collect()
}

/// VM counts whose shards get a full design search (the others re-fit the nearest one's shape).
pub(super) fn anchor_counts(max_vms: u32) -> Vec<u32> {
    (0..)
        .map(|k| 1u32 << k)
        .take_while(|c| *c <= max_vms)
        .collect()
}

/// Prices, in parallel and once each, the design grids of every provider's anchor shards: VM types of one memory
/// size at one count share a grid, so this spreads the distinct ones over the cores before the configurations
/// that use them are scored.
pub(super) fn warm_anchor_grids(
    catalog: &Catalog,
    workload: &Workload,
    phi: &PhiLibrary,
    opts: &SearchOptions,
    memo: &EvalMemo,
) {
    // the configurations that use these grids count their designs
    let designs = Tally::default();
    let mut seen = std::collections::HashSet::new();
    let mut jobs: Vec<(&Provider, usize, u32)> = Vec::new();
    for provider in searched(catalog, opts) {
        for i in undominated(provider) {
            for c in anchor_counts(opts.max_vms) {
                let key = (provider.vms[i].memory_bytes, provider.block_bytes, c);
                if seen.insert(key) {
                    jobs.push((provider, i, c));
                }
            }
        }
    }
    jobs.par_iter().for_each(|&(provider, i, c)| {
        Ctx {
            catalog,
            provider,
            workload,
            phi,
            opts,
            designs: &designs,
            memo,
            shards: &ShardMemo::default(),
        }
        .warm(i, c)
    });
}

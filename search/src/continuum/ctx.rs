//! One provider's search context: a configuration's shards, each VM type's shard searched once, priced and
//! scored.

use crate::continuum::config::{Config, Part};
use crate::continuum::{noisy_mix, SearchOptions};
use crate::designs::{Baseline, EvalMemo, Scored, Shape, Shard, Tally, Template};
use cosine_cloud_pricing::{quote, Catalog, Provider, Quote, VmType};
use cosine_cost_model::cpu::PhiLibrary;
use cosine_cost_model::dist::LshEngine;
use cosine_cost_model::machine::{Machine, Reserve, ThroughputModel};
use cosine_design::Workload;
use std::sync::atomic::Ordering;

/// A function from a design template to the designs searched (shared counter).
pub(super) struct Ctx<'a> {
    pub(super) catalog: &'a Catalog,
    pub(super) provider: &'a Provider,
    pub(super) workload: &'a Workload,
    pub(super) phi: &'a PhiLibrary,
    pub(super) opts: &'a SearchOptions,
    pub(super) designs: &'a Tally,
    pub(super) memo: &'a EvalMemo,
    pub(super) shards: &'a ShardMemo,
}

/// What a shard's design search walks: every shape, a few shapes (each over the whole ε grid), or the templates
/// that the searches of its VM type's neighbouring shard sizes settled on.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub(super) enum Search {
    Full,
    Shapes(Vec<Shape>),
    Templates(Vec<Template>),
    /// The whole search and the templates, the faster of the two (a shard beyond every searched size).
    FullAndTemplates(Vec<Template>),
}

/// What a shard's design search depends on within one provider's search: the VM type, the shard's entries and
/// IOPS (floats by their bits), and what is searched. Mixes of two types often give one type the
/// same shard (the same total memory from different counts), and a mix is often tried again and again.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub(super) struct ShardKey {
    pub(super) vm: usize,
    pub(super) entries: u64,
    pub(super) iops: u64,
    pub(super) mibps: u64,
    pub(super) search: Search,
}

/// Shard searches done for one provider's configurations, by [`ShardKey`].
pub(super) type ShardMemo = parking_lot::Mutex<rustc_hash::FxHashMap<ShardKey, Option<Scored>>>;

impl Ctx<'_> {
    /// The shard of `entries` on a VM of type `vm` whose volume gives `volume` (IOPS, MiB/s): its workload
    /// scaled to its entries, the memory its design may take and the machine's limits.
    pub(super) fn shard(&self, vm: usize, entries: f64, volume: Volume) -> Shard<'_> {
        let v = &self.provider.vms[vm];
        let mut w = self.workload.clone();
        let frac = entries / self.workload.entries as f64;
        w.entries = (entries.round() as u64).max(1);
        w.operations = ((self.workload.operations as f64 * frac).round() as u64).max(1);
        // (the operations run before, χ₀, shard with the data like χ: a shard's key is its entries)
        w.operations_before = (self.workload.operations_before as f64 * frac).round() as u64;
        w.mix = if self.opts.rho.is_some() {
            w.mix
        } else {
            noisy_mix(&w.mix, self.opts.noise)
        };
        let opts = self.opts;
        Shard {
            keys: self.memo.keys(&w),
            workload: w,
            memory_bytes: design_memory(self.provider, v, opts),
            machine: Machine {
                vcpus: v.vcpus,
                iops: volume.iops,
                mibps: volume.mibps,
                read_latency_s: opts.read_latency_s.unwrap_or(self.provider.read_latency_s),
                in_flight: opts.in_flight.unwrap_or(v.vcpus as f64),
                page_cache_bytes: page_cache(self.provider, v, opts),
            },
            block_bytes: self.provider.block_bytes,
            phi: self.phi,
            cpu: &opts.cpu,
            throughput: opts.throughput,
            max_recovery_s: opts.max_recovery_s,
            rho: opts.rho,
            epsilon: opts.epsilon,
            system_phi: None,
            system_cpu: None,
            quirks: cosine_cost_model::ReferenceQuirks::NONE,
            lsh_engine: LshEngine::Cosine,
            scored: Some(self.designs),
            memo: Some(self.memo),
        }
    }

    /// `count` VMs of type `i`, each holding `entries` on a volume of `volume`, running `design`.
    pub(super) fn part(
        &self,
        i: usize,
        count: u32,
        entries: f64,
        volume: Volume,
        design: Scored,
    ) -> Part {
        let vm = &self.provider.vms[i];
        let m = self.shard(i, entries, volume).machine;
        Part {
            vm: vm.name.clone(),
            count,
            vcpus: vm.vcpus,
            memory_gib: vm.memory_gib(),
            entries_per_vm: entries.round() as u64,
            iops: volume.iops,
            mibps: volume.mibps,
            read_latency_us: m.read_latency_s * 1e6,
            in_flight: m.in_flight,
            reserved_gib: (vm.memory_bytes - design_memory(self.provider, vm, self.opts)) as f64
                / (1u64 << 30) as f64,
            page_cache_gib: m.page_cache_bytes / (1u64 << 30) as f64,
            design,
        }
    }

    pub(super) fn price(&self, counts: &[(usize, u32)]) -> Option<Quote> {
        let w = self.workload;
        let data = w.entries as f64 * w.entry_bytes() as f64;
        let q = quote(
            self.catalog,
            self.provider,
            counts,
            data,
            w.mix.reads(),
            w.mix.writes(),
            &self.opts.slas,
        )
        .ok()?;
        (q.total_usd >= self.opts.cost_range.0 && q.total_usd <= self.opts.cost_range.1)
            .then_some(q)
    }

    /// Scores a configuration; `search` gives, per VM type, what its shard's design search walks.
    pub(super) fn score(&self, counts: &[(usize, u32)], search: &[Search]) -> Option<Config> {
        self.score_below(counts, search, f64::INFINITY, &[])
    }

    /// [`Ctx::score`], giving up (None) as soon as one VM type's shard takes `limit` seconds or more: the
    /// configuration is then no faster than one already found for its money. `first` lists the VM types to
    /// search first (indices into `counts`; the most likely to reach the limit), the rest follow in order.
    pub(super) fn score_below(
        &self,
        counts: &[(usize, u32)],
        search: &[Search],
        limit: f64,
        first: &[usize],
    ) -> Option<Config> {
        let q = self.price(counts)?;
        let total_mem: f64 = counts
            .iter()
            .map(|&(i, c)| self.provider.vms[i].memory_bytes as f64 * c as f64)
            .sum();
        let order: Vec<usize> = first
            .iter()
            .copied()
            .chain((0..counts.len()).filter(|k| !first.contains(k)))
            .collect();
        let mut parts: Vec<Option<Part>> = vec![None; counts.len()];
        let mut latency: f64 = 0.0;
        for k in order {
            let (i, c) = counts[k];
            let vm = &self.provider.vms[i];
            let entries = self.workload.entries as f64 * vm.memory_bytes as f64 / total_mem;
            let scored = self.shard_best(i, entries, Volume::of(&q, k), &search[k])?;
            latency = latency.max(scored.latency_s);
            if latency >= limit {
                return None;
            }
            parts[k] = Some(self.part(i, c, entries, Volume::of(&q, k), scored));
        }
        let parts: Vec<Part> = parts.into_iter().flatten().collect();
        if let Some(p) = &self.opts.progress {
            p.fetch_add(1, Ordering::Relaxed);
        }
        let throughput = if latency > 0.0 {
            self.workload.operations as f64 / latency
        } else {
            f64::INFINITY
        };
        Some(Config {
            provider: self.provider.id.clone(),
            parts,
            cost: q,
            latency_s: latency,
            throughput,
        })
    }
}

impl Ctx<'_> {
    /// The best design for a shard of `entries` on a VM of type `i` with `iops`, as `search` walks the designs,
    /// searched once per provider.
    pub(super) fn shard_best(
        &self,
        i: usize,
        entries: f64,
        volume: Volume,
        search: &Search,
    ) -> Option<Scored> {
        let key = ShardKey {
            vm: i,
            entries: entries.to_bits(),
            iops: volume.iops.to_bits(),
            mibps: volume.mibps.to_bits(),
            search: search.clone(),
        };
        if let Some(s) = self.shards.lock().get(&key) {
            return s.clone();
        }
        let shard = self.shard(i, entries, volume);
        let found = match search {
            Search::Full => shard.best(),
            Search::Shapes(few) => shard.best_among(few),
            Search::Templates(few) => shard.best_from(few),
            Search::FullAndTemplates(few) => {
                let from = shard.best_from(few);
                match (shard.best(), from) {
                    (Some(a), Some(b)) => Some(if b.latency_s < a.latency_s { b } else { a }),
                    (a, b) => a.or(b),
                }
            }
        };
        self.shards.lock().insert(key, found.clone());
        found
    }

    /// The `n` fastest shapes of the whole design grid of `count` VMs of type `i` (None when that configuration
    /// is priced outside the cost range).
    pub(super) fn top_shapes(&self, i: usize, count: u32, n: usize) -> Option<Vec<Shape>> {
        let q = self.price(&[(i, count)])?;
        let entries = self.workload.entries as f64 / count as f64;
        Some(self.shard(i, entries, Volume::of(&q, 0)).top_shapes(n))
    }

    /// The search for a shard of `entries` on type `i` that is not an anchor's: the fastest shapes of the anchor
    /// shards just larger and just smaller (a full search when neither is priced). `tops` holds each anchor's
    /// fastest shapes, by (type, count).
    pub(super) fn shapes_between(
        &self,
        i: usize,
        entries: f64,
        anchors: &[u32],
        tops: &std::collections::HashMap<(usize, u32), Vec<Shape>>,
    ) -> Search {
        let n = self.workload.entries as f64;
        let larger = anchors.iter().rev().find(|&&a| n / a as f64 >= entries);
        let smaller = anchors.iter().find(|&&a| n / a as f64 <= entries);
        let mut shapes: Vec<Shape> = Vec::new();
        for &a in larger.into_iter().chain(smaller) {
            for &shape in tops.get(&(i, a)).into_iter().flatten() {
                if !shapes.contains(&shape) {
                    shapes.push(shape);
                }
            }
        }
        if shapes.is_empty() {
            Search::Full
        } else {
            Search::Shapes(Shape::spanning(&shapes))
        }
    }

    /// Prices the design grid of `count` VMs of type `i` into the memo (what [`Ctx::score`] of that
    /// configuration then finds there).
    pub(super) fn warm(&self, i: usize, count: u32) {
        if let Some(q) = self.price(&[(i, count)]) {
            let entries = self.workload.entries as f64 / count as f64;
            // the grid lands in the memo; the design itself is found again by the configuration's own search
            let _ = self.shard(i, entries, Volume::of(&q, 0)).best();
        }
    }

    /// A configuration of `count` VMs of type `i` running a fixed system's design.
    pub(super) fn score_baseline(&self, i: usize, count: u32, system: Baseline) -> Option<Config> {
        let q = self.price(&[(i, count)])?;
        let entries = self.workload.entries as f64 / count as f64;
        let mut shard = self.shard(i, entries, Volume::of(&q, 0));
        shard.system_phi = self.phi.get(system.phi_key());
        shard.system_cpu = self.opts.cpu.get(system.phi_key());
        shard.quirks = system.model_quirks();
        shard.lsh_engine = system.lsh_engine();
        let design = shard.baseline_design(system)?;
        let scored = shard.score(design)?;
        let latency = scored.latency_s;
        Some(Config {
            provider: self.provider.id.clone(),
            parts: vec![self.part(i, count, entries, Volume::of(&q, 0), scored)],
            cost: q,
            latency_s: latency,
            throughput: if latency > 0.0 {
                self.workload.operations as f64 / latency
            } else {
                f64::INFINITY
            },
        })
    }
}

/// The IOPS and bandwidth one VM's volume gives it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(super) struct Volume {
    pub(super) iops: f64,
    pub(super) mibps: f64,
}

impl Volume {
    /// The volume of the `k`-th VM type of a quote.
    pub(super) fn of(q: &Quote, k: usize) -> Self {
        Volume {
            iops: q.iops_per_vm[k],
            mibps: q.mibps_per_vm[k],
        }
    }
}

/// The memory a design may take on a VM of type `vm`: under the physical model the VM's less its reserve (the
/// operating system's, as the provider gives it or `--os-reserve` sets it, and the engine's measured overhead);
/// under the paper's, all of it.
pub(super) fn design_memory(provider: &Provider, vm: &VmType, opts: &SearchOptions) -> u64 {
    match opts.throughput {
        ThroughputModel::Paper => vm.memory_bytes,
        ThroughputModel::Physical => reserve(provider, opts).design_bytes(vm.memory_bytes),
    }
}

/// The memory each VM of `provider` keeps outside the design.
pub(super) fn reserve(provider: &Provider, opts: &SearchOptions) -> Reserve {
    let (os_bytes, os_share) = opts.os_reserve.unwrap_or(provider.os_reserve);
    let (engine_bytes, engine_share) = provider.engine_overhead.unwrap_or(opts.engine_overhead);
    Reserve {
        os_bytes,
        os_share,
        engine_bytes,
        engine_share,
    }
}

/// The page cache the system keeps for the engine's files on a VM of type `vm`: a machine of one's own under a
/// memory cgroup (its catalog's reserve is the page cache the cgroup leaves the engine's files); none counted on
/// a cloud VM (its reserve is the operating system's), nor under the paper's model.
pub(super) fn page_cache(provider: &Provider, vm: &VmType, opts: &SearchOptions) -> f64 {
    if opts.throughput == ThroughputModel::Paper || provider.id != "local" {
        return 0.0;
    }
    let (bytes, share) = opts.os_reserve.unwrap_or(provider.os_reserve);
    bytes + share * vm.memory_bytes as f64
}

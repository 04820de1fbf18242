//! What a shard's search settled on (a template) and the entry cache: the cache shares tried for the winner,
//! and a nearby shard's search seeded from its neighbours' templates.

use crate::designs::lsh::lsh_layouts;
use crate::designs::shapes::Shape;
use crate::designs::{Scored, Shard};
use cosine_design::Design;

/// Shapes near a template whose buffer [`Shard::best_from`] refines (the fastest at the templates' buffer
/// shares).
pub const REFINED_NEIGHBOURS: usize = 3;

/// Shares of a VM's memory the entry cache (M_BC) is tried at, for the winning shape of a workload that reads
/// (see [`Shard::with_cache`]).
pub const CACHE_SHARES: [f64; 7] = [0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7];

/// What a shard's design search settled on: the winning shape of the ε grid or the LSH layout, and the share
/// of the VM's memory given to the entry cache (0: none). A shard of a nearby size on the same VM type tries
/// these again ([`Shard::best_from`]) instead of the whole search: its buffer searched over the ε grid and
/// refined, the rest laid out as the shape lays it out. The buffer's share is of the buffer ceiling beside the
/// cache.
#[derive(Clone, Copy, Debug)]
pub struct Template {
    pub(super) winner: Winner,
    pub(super) cache_share: f64,
    /// The buffer's share of the memory beside the cache.
    pub(super) buffer_share: f64,
}

impl PartialEq for Template {
    fn eq(&self, other: &Self) -> bool {
        self.key() == other.key()
    }
}

impl Eq for Template {}

impl std::hash::Hash for Template {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        self.key().hash(state);
    }
}

impl Template {
    /// The template's identity by numbers (floats by their bits), for memo keys.
    pub fn key(&self) -> [u64; 6] {
        let (share, buffer) = (self.cache_share.to_bits(), self.buffer_share.to_bits());
        match self.winner {
            Winner::Grid(Shape::Lsm { t, k, z }) => [0, t, k, z, share, buffer],
            Winner::Grid(Shape::Btree { t }) => [1, t, 0, 0, share, buffer],
            Winner::Lsh((div, tiered)) => [2, div, u64::from(tiered), 0, share, buffer],
        }
    }

    /// The template of `scored`, found with `winner` and `cache_share` on a shard whose memory beside the
    /// cache gives buffers up to `ceiling` ([`Shard::buffer_ceiling`]).
    pub(super) fn of(winner: Winner, cache_share: f64, ceiling: u64, scored: &Scored) -> Template {
        Template {
            winner,
            cache_share,
            buffer_share: scored.design.buffer_bytes as f64 / (ceiling as f64).max(1.0),
        }
    }
}

/// What won a shard's design search before the entry cache is tried: a shape of the ε grid, or Cosine's LSH
/// design at a divisor of its size ratio, its last level tiered or not.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(super) enum Winner {
    Grid(Shape),
    Lsh((u64, bool)),
}

impl Shard<'_> {
    /// The entry cache (M_BC) for the winning shape or LSH design: each share of memory in [`CACHE_SHARES`]
    /// taken from the rest and given to the cache, the rest searched again over the buffer grid and refined
    /// (the LSH design: laid out again in the rest); the fastest design, with or without a cache. Only for
    /// workloads with lookups (what a read-modify-write reads, its own write drops from the cache).
    pub(super) fn with_cache(&self, winner: Winner, best: Scored) -> Scored {
        let mix = &self.workload.mix;
        let ceiling = |share: f64| self.beside_cache(share).0.buffer_ceiling();
        let template = Template::of(winner, 0.0, ceiling(0.0), &best);
        let mut best = Scored {
            template: Some(template),
            ..best
        };
        if mix.lookup <= 0.0 {
            return best;
        }
        for share in CACHE_SHARES {
            if let Some(s) = self.cached(winner, share) {
                if s.latency_s < best.latency_s {
                    best = Scored {
                        template: Some(Template::of(winner, share, ceiling(share), &s)),
                        ..s
                    };
                }
            }
        }
        best
    }

    /// The fastest design of `winner` with `share` of memory given to the entry cache: the rest searched over
    /// the buffer grid and refined (the LSH design: laid out in the rest).
    pub(super) fn cached(&self, winner: Winner, share: f64) -> Option<Scored> {
        let (rest, cache) = self.beside_cache(share);
        match winner {
            Winner::Grid(shape) => {
                let make = |m_b| rest.make_cached(shape, m_b, cache);
                rest.buffer_grid(&make)
                    .map(|(frac, s)| rest.refine_buffer(&make, frac, s))
            }
            Winner::Lsh((divisor, tiered)) => {
                let mut d = rest.lsh_design_at(divisor, tiered)?;
                d.cache_bytes = cache;
                rest.score(d)
            }
        }
    }

    /// The fastest design near `templates` on this shard: a shard between two searched sizes of its VM type,
    /// given what their searches settled on. Around each template: its shape, the same kind at the size
    /// ratios two steps either side and its other hot-level run counts, ranked at the templates' buffer
    /// shares; the [`REFINED_NEIGHBOURS`] fastest refined at the template's cache share (the buffer from the
    /// ε grid's and the templates' fastest points, as memory hopping refines it), then at the cache shares
    /// either side for as long as the shard gets faster. An LSH template tries every divisor of its size ratio
    /// (T₀ follows the data) at its cache share and the neighbouring ones. None when nothing fits.
    pub fn best_from(&self, templates: &[Template]) -> Option<Scored> {
        let own = self.shapes();
        let ceiling = |share: f64| self.beside_cache(share).0.buffer_ceiling();
        let mut starts: Vec<f64> = Vec::new();
        for t in templates {
            if matches!(t.winner, Winner::Grid(_)) && !starts.contains(&t.buffer_share) {
                starts.push(t.buffer_share);
            }
        }
        // each (winner, cache share) tried once: its latency (None where nothing fits)
        let mut tried: Vec<((Winner, u64), Option<f64>)> = Vec::new();
        let mut best: Option<Scored> = None;
        let mut try_one = |winner: Winner, share: f64, best: &mut Option<Scored>| -> Option<f64> {
            if let Some((_, l)) = tried.iter().find(|(k, _)| *k == (winner, share.to_bits())) {
                return *l;
            }
            let s = match winner {
                Winner::Grid(shape) => self.local(shape, share, &starts),
                Winner::Lsh(_) => self.cached(winner, share),
            };
            let latency = s.as_ref().map(|s| s.latency_s);
            tried.push(((winner, share.to_bits()), latency));
            let s = s?;
            if best.as_ref().is_none_or(|b| s.latency_s < b.latency_s) {
                *best = Some(Scored {
                    template: Some(Template::of(winner, share, ceiling(share), &s)),
                    ..s
                });
            }
            latency
        };
        let shares = self.cache_shares();
        for t in templates {
            let at = shares
                .iter()
                .position(|&s| s == t.cache_share)
                .unwrap_or_else(|| {
                    shares
                        .partition_point(|&s| s < t.cache_share)
                        .min(shares.len() - 1)
                });
            match t.winner {
                Winner::Lsh(_) => {
                    for &share in &shares[at.saturating_sub(1)..(at + 2).min(shares.len())] {
                        for layout in lsh_layouts() {
                            try_one(Winner::Lsh(layout), share, &mut best);
                        }
                    }
                }
                Winner::Grid(shape) => {
                    // every neighbouring shape at the starts, the fastest few refined
                    let mut ranked: Vec<(Shape, f64)> = shape
                        .neighbours()
                        .into_iter()
                        .filter(|s| own.contains(s))
                        .filter_map(|shape| {
                            let (_, s) = self.at_starts(shape, t.cache_share, &starts)?;
                            Some((shape, s.latency_s))
                        })
                        .collect();
                    ranked.sort_by(|a, b| a.1.total_cmp(&b.1));
                    // each refined at the template's cache share, then the share climbed both ways while the
                    // shard gets faster
                    for (shape, _) in ranked.into_iter().take(REFINED_NEIGHBOURS) {
                        let winner = Winner::Grid(shape);
                        let Some(here) = try_one(winner, shares[at], &mut best) else {
                            continue;
                        };
                        for step in [-1isize, 1] {
                            let mut last = here;
                            let mut i = at as isize + step;
                            while let Some(&share) =
                                usize::try_from(i).ok().and_then(|i| shares.get(i))
                            {
                                match try_one(winner, share, &mut best) {
                                    Some(l) if l < last => last = l,
                                    _ => break,
                                }
                                i += step;
                            }
                        }
                    }
                }
            }
        }
        best
    }

    /// The entry cache's shares this shard's search tries, 0 (no cache) first: [`CACHE_SHARES`] for a
    /// workload with lookups.
    pub(super) fn cache_shares(&self) -> Vec<f64> {
        let mut shares = vec![0.0];
        if self.workload.mix.lookup > 0.0 {
            shares.extend(CACHE_SHARES);
        }
        shares
    }

    /// `shape` with `cache_share` of memory given to the entry cache, its buffer at the fastest of `starts`
    /// (shares of the memory beside the cache), with that share.
    pub(super) fn at_starts(
        &self,
        shape: Shape,
        cache_share: f64,
        starts: &[f64],
    ) -> Option<(f64, Scored)> {
        let (rest, cache) = self.beside_cache(cache_share);
        rest.grid_over(&|m_b| rest.make_cached(shape, m_b, cache), starts)
    }

    /// [`Shard::at_starts`] with the buffer then refined (memory hopping's second phase).
    pub(super) fn local(&self, shape: Shape, cache_share: f64, starts: &[f64]) -> Option<Scored> {
        let (rest, cache) = self.beside_cache(cache_share);
        let make = |m_b| rest.make_cached(shape, m_b, cache);
        // refined from the ε grid's fastest point (as the whole search refines it) and from the templates'
        // fastest (where a neighbouring shard's search found its buffer)
        [rest.buffer_grid(&make), rest.grid_over(&make, starts)]
            .into_iter()
            .flatten()
            .map(|(start, s)| rest.refine_buffer(&make, start, s))
            .min_by(|a, b| a.latency_s.total_cmp(&b.latency_s))
    }

    /// This shard with `cache_share` of its memory given to the entry cache: the rest, and the cache's bytes.
    pub(super) fn beside_cache(&self, cache_share: f64) -> (Shard<'_>, u64) {
        let m = self.memory_bytes;
        let cache = (m as f64 * cache_share) as u64;
        (
            Shard {
                memory_bytes: m - cache,
                ..self.clone()
            },
            cache,
        )
    }

    /// [`Shard::make`] with an entry cache of `cache` bytes beside this shard's memory.
    pub(super) fn make_cached(&self, shape: Shape, m_b: u64, cache: u64) -> Option<Design> {
        self.make(shape, m_b).map(|mut d| {
            d.cache_bytes = cache;
            d
        })
    }
}

//! RTune's genetic search (§3.2.4, Table 6) over the unit cube of a knob space, with a fitness function (the
//! surrogate's score) evaluated a generation at a time.
//!
//! A population of 128 configurations; each generation keeps the 64 best by rank (the rest are dropped) and
//! refills from the kept ones: with the crossover chance (0.5) a child is two parents joined at a random knob
//! (one-point crossover), else a copy of one parent; with the mutation chance (0.4) one knob of the child is
//! drawn anew. Every point is canonical (its knobs' values), so the search moves between configurations, never
//! within one. Every point of the space is a valid configuration within the memory budget (the knob space
//! guarantees it), so there is no constraint to repair. Written here rather than taken from `genevo`: the
//! whole algorithm is these few lines, and batching a generation's fitness through the network matters more
//! than a framework's generality.

use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

/// The search's settings.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct GaSpec {
    /// Configurations per generation (RTune: 128).
    pub population: usize,
    /// Configurations kept by rank selection (RTune: 64).
    pub keep: usize,
    /// Chance that a child comes from crossover (RTune: 0.5).
    pub crossover: f64,
    /// Chance that a child mutates (RTune: 0.4).
    pub mutation: f64,
    /// Generations (RTune: 1,000).
    pub generations: usize,
    /// Seed.
    pub seed: u64,
}

impl Default for GaSpec {
    fn default() -> Self {
        GaSpec {
            population: 128,
            keep: 64,
            crossover: 0.5,
            mutation: 0.4,
            generations: 1000,
            seed: 1,
        }
    }
}

/// The best distinct points found, best first, with their fitness (higher is better).
///
/// `initial` seeds the first generation (the rest is drawn uniformly); `canonical` maps a point to its
/// configuration's point; `fitness` scores a batch of points.
pub fn search(
    dim: usize,
    initial: &[Vec<f64>],
    spec: GaSpec,
    canonical: &dyn Fn(&[f64]) -> Vec<f64>,
    fitness: &mut dyn FnMut(&[Vec<f64>]) -> Vec<f64>,
) -> Vec<(Vec<f64>, f64)> {
    let mut rng = StdRng::seed_from_u64(spec.seed);
    let population = spec.population.max(2);
    let keep = spec.keep.clamp(1, population - 1);
    let mut pop: Vec<Vec<f64>> = initial
        .iter()
        .take(population)
        .map(|p| canonical(p))
        .collect();
    while pop.len() < population {
        let p: Vec<f64> = (0..dim).map(|_| rng.random::<f64>()).collect();
        pop.push(canonical(&p));
    }
    let mut scored: Vec<(Vec<f64>, f64)> = {
        let f = fitness(&pop);
        pop.into_iter().zip(f).collect()
    };
    for _ in 0..spec.generations {
        scored.sort_by(|a, b| b.1.total_cmp(&a.1));
        scored.truncate(keep);
        let mut children = Vec::with_capacity(population - keep);
        while children.len() < population - keep {
            let a = &scored[rng.random_range(0..keep)].0;
            let mut child = if rng.random::<f64>() < spec.crossover && dim > 1 {
                let b = &scored[rng.random_range(0..keep)].0;
                let cut = rng.random_range(1..dim);
                a[..cut].iter().chain(&b[cut..]).copied().collect()
            } else {
                a.clone()
            };
            if rng.random::<f64>() < spec.mutation {
                let i = rng.random_range(0..dim);
                child[i] = rng.random::<f64>();
            }
            children.push(canonical(&child));
        }
        let f = fitness(&children);
        scored.extend(children.into_iter().zip(f));
    }
    scored.sort_by(|a, b| b.1.total_cmp(&a.1));
    let mut out: Vec<(Vec<f64>, f64)> = Vec::new();
    for (p, f) in scored {
        if !out.iter().any(|(q, _)| *q == p) {
            out.push((p, f));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_the_peak_of_a_smooth_function_on_a_grid() {
        // ten steps per axis, the peak at (0.75, 0.25, 0.55)
        let canon = |p: &[f64]| -> Vec<f64> {
            p.iter()
                .map(|x| ((x * 10.0).floor().min(9.0) + 0.5) / 10.0)
                .collect()
        };
        let peak = [0.75, 0.25, 0.55];
        // minus the squared distance to the peak
        let score = |batch: &[Vec<f64>]| -> Vec<f64> {
            batch
                .iter()
                .map(|p| {
                    -p.iter()
                        .zip(&peak)
                        .map(|(a, b)| (a - b).powi(2))
                        .sum::<f64>()
                })
                .collect()
        };
        let mut calls = 0;
        let mut f = |batch: &[Vec<f64>]| -> Vec<f64> {
            calls += batch.len();
            score(batch)
        };
        let spec = GaSpec {
            generations: 60,
            ..GaSpec::default()
        };
        let best = search(3, &[], spec, &canon, &mut f);
        assert_eq!(best[0].0, peak.to_vec());
        assert!(best
            .windows(2)
            .all(|w| w[0].1 >= w[1].1 && w[0].0 != w[1].0));
        assert_eq!(calls, 128 + 60 * 64);
        let again = search(3, &[], spec, &canon, &mut |b: &[Vec<f64>]| score(b));
        assert_eq!(again[..5], best[..5], "same seed, same search");
    }
}

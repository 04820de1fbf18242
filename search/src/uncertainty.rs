//! Endure's uncertainty benchmark (Endure Sections 6-7; MODEL.md §11.4): tune nominally and robustly for an
//! expected workload, then compare both tunings over a benchmark set B of sampled workloads.

use crate::tuning::{TuneError, TuneProblem, TuneResult};
use cosine_cost_model::endure::EndureSystem;
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use rayon::prelude::*;
use serde::Serialize;

/// The benchmark set B: per sample, four query counts drawn uniformly from (0, 10000), normalised.
pub fn sample_workloads(samples: usize, seed: u64) -> Vec<[f64; 4]> {
    let mut rng = StdRng::seed_from_u64(seed);
    (0..samples)
        .map(|_| {
            let counts: [f64; 4] = std::array::from_fn(|_| rng.random_range(1..10_000) as f64);
            let s: f64 = counts.iter().sum();
            counts.map(|c| c / s)
        })
        .collect()
}

/// Mean and quartiles of a sample.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct Summary {
    /// Mean.
    pub mean: f64,
    /// First quartile.
    pub q1: f64,
    /// Median.
    pub median: f64,
    /// Third quartile.
    pub q3: f64,
}

impl Summary {
    /// Summarises `values` (sorted in place).
    pub fn of(values: &mut [f64]) -> Summary {
        values.sort_by(f64::total_cmp);
        let n = values.len();
        let at = |q: f64| {
            if n == 0 {
                return f64::NAN;
            }
            let pos = q * (n - 1) as f64;
            let (i, frac) = (pos.floor() as usize, pos.fract());
            values[i] + (values[(i + 1).min(n - 1)] - values[i]) * frac
        };
        Summary {
            mean: values.iter().sum::<f64>() / n.max(1) as f64,
            q1: at(0.25),
            median: at(0.5),
            q3: at(0.75),
        }
    }
}

/// The outcome for one expected workload and ρ.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct UncertaintyReport {
    /// The expected workload (z0, z1, q, w).
    pub expected: [f64; 4],
    /// ρ of the robust tuning.
    pub rho: f64,
    /// Samples in B.
    pub samples: usize,
    /// Nominal tuning Φ_N.
    pub nominal: TuneResult,
    /// Robust tuning Φ_R.
    pub robust: TuneResult,
    /// Normalised delta throughput Δ_ŵ(Φ_N, Φ_R) = C(ŵ,Φ_N)/C(ŵ,Φ_R) − 1 over B (> 0: robust is faster).
    pub delta: Summary,
    /// Share of sampled workloads on which the robust tuning is faster.
    pub robust_wins: f64,
    /// Throughput range Θ_B(Φ_N) = max − min of 1/C(ŵ, Φ_N) over B.
    pub throughput_range_nominal: f64,
    /// Θ_B(Φ_R).
    pub throughput_range_robust: f64,
}

/// Runs the benchmark for one expected workload.
pub fn run(
    system: EndureSystem,
    expected: [f64; 4],
    rho: f64,
    bench: &[[f64; 4]],
) -> Result<UncertaintyReport, TuneError> {
    let nominal_problem = TuneProblem::new(system, expected, 0.0)?;
    let robust_problem = TuneProblem::new(system, expected, rho)?;
    let (nominal, robust) = rayon::join(|| nominal_problem.solve(), || robust_problem.solve());
    let pairs: Vec<(f64, f64)> = bench
        .par_iter()
        .map(|w| {
            let cn = cosine_cost_model::endure::dot(w, &nominal.costs);
            let cr = cosine_cost_model::endure::dot(w, &robust.costs);
            (cn, cr)
        })
        .collect();
    let mut deltas: Vec<f64> = pairs.iter().map(|(cn, cr)| cn / cr - 1.0).collect();
    let wins = deltas.iter().filter(|d| **d > 0.0).count() as f64 / deltas.len().max(1) as f64;
    let range = |f: &dyn Fn(&(f64, f64)) -> f64| {
        let tp: Vec<f64> = pairs.iter().map(|p| 1.0 / f(p)).collect();
        tp.iter().cloned().fold(f64::MIN, f64::max) - tp.iter().cloned().fold(f64::MAX, f64::min)
    };
    Ok(UncertaintyReport {
        expected,
        rho,
        samples: bench.len(),
        nominal,
        robust,
        delta: Summary::of(&mut deltas),
        robust_wins: wins,
        throughput_range_nominal: range(&|p| p.0),
        throughput_range_robust: range(&|p| p.1),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use cosine_design::ENDURE_EXPECTED;

    #[test]
    fn samples_are_workloads() {
        let b = sample_workloads(1000, 7);
        assert_eq!(b.len(), 1000);
        for w in &b {
            assert!((w.iter().sum::<f64>() - 1.0).abs() < 1e-12);
            assert!(w.iter().all(|x| *x > 0.0));
        }
        assert_eq!(sample_workloads(10, 7), sample_workloads(10, 7));
    }

    /// Endure's headline: with ρ ≥ 0.5, robust tunings beat nominal ones on average over B for unimodal,
    /// bimodal and trimodal expected workloads; on the uniform w0, nominal wins slightly.
    #[test]
    fn endure_headline() {
        let bench = sample_workloads(2000, 42);
        let sys = EndureSystem::default();
        let w0 = run(sys, ENDURE_EXPECTED[0], 1.0, &bench).unwrap();
        assert!(
            w0.delta.mean < 0.0 && w0.delta.mean > -0.25,
            "w0: {:?}",
            w0.delta
        );
        for rho in [0.5, 1.0, 2.0] {
            let mut total = 0.0;
            for (i, w) in ENDURE_EXPECTED.iter().enumerate().skip(1) {
                let r = run(sys, *w, rho, &bench).unwrap();
                total += r.delta.mean;
                assert!(
                    r.throughput_range_robust <= r.throughput_range_nominal * 1.0001
                        || r.delta.mean > 0.0,
                    "w{i}"
                );
            }
            assert!(total / 14.0 > 0.5, "rho {rho}: mean delta {}", total / 14.0);
        }
    }
}

//! Workload representation and matching (RTune §3.2.1-3.2.2).
//!
//! A workload is represented by five statistics (mean, variance, first, second and third quartile) of each
//! internal metric over the workload's runs. Metrics are first standardised over every run in the pool (so a
//! byte counter and a false-positive rate weigh alike), and metrics that are constant over the pool are
//! dropped. The distance between two workloads is, per metric, the Mahalanobis distance between their
//! five-statistic vectors under the covariance pooled over every metric and workload, summed over metrics. The
//! basic workloads nearest the target weigh most: w_i = (d_max − d_i) / Σ_k (d_max − d_k).
//!
//! Unlike RTune, which compares the target's 20 probe runs with each basic workload's 20,000 random runs, the
//! basic workloads are represented here over the same configurations the target was probed with (they are
//! taken from the repository, so each basic workload has run them): like is compared with like.

use crate::repo::RunRecord;
use crate::{Error, Result};
use nalgebra::{DMatrix, DVector};
use std::collections::BTreeMap;

/// Five statistics of each metric of one workload, in standardised units.
#[derive(Clone, Debug, PartialEq)]
pub struct Representation {
    /// The workload.
    pub workload: String,
    /// Per metric (in [`Metrics::names`] order): mean, variance, Q1, Q2, Q3.
    pub stats: Vec<[f64; 5]>,
}

/// The metrics a comparison uses and how each is standardised.
#[derive(Clone, Debug, PartialEq)]
pub struct Metrics {
    /// Metric names (non-constant over the pool).
    pub names: Vec<String>,
    /// Mean of each over the pool.
    pub mean: Vec<f64>,
    /// Standard deviation of each over the pool.
    pub std: Vec<f64>,
}

/// Whether a metric is a timing (a latency percentile or a throughput), left out of the representation.
pub fn is_timing(name: &str) -> bool {
    ["_us", ".p50", ".p99", "micros", "throughput"]
        .iter()
        .any(|t| name.contains(t))
}

/// The value of `q` ∈ [0, 1] of sorted values, interpolated linearly.
fn quantile(sorted: &[f64], q: f64) -> f64 {
    if sorted.is_empty() {
        return 0.0;
    }
    let x = q * (sorted.len() - 1) as f64;
    let (i, f) = (x.floor() as usize, x - x.floor());
    let j = (i + 1).min(sorted.len() - 1);
    sorted[i] + f * (sorted[j] - sorted[i])
}

/// Mean, variance (population), Q1, Q2, Q3 of `values`.
pub fn five(values: &[f64]) -> [f64; 5] {
    let n = values.len().max(1) as f64;
    let mean = values.iter().sum::<f64>() / n;
    let var = values.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / n;
    let mut s = values.to_vec();
    s.sort_by(f64::total_cmp);
    [
        mean,
        var,
        quantile(&s, 0.25),
        quantile(&s, 0.5),
        quantile(&s, 0.75),
    ]
}

fn metric(r: &RunRecord, name: &str) -> f64 {
    r.metrics.get(name).copied().unwrap_or(0.0)
}

impl Metrics {
    /// The metrics of a pool of runs: every counter any run reports (a run without it counts 0: a counter
    /// of an operation the workload never runs is zero), less those constant over the pool and less timings
    /// (latencies, throughputs), which move with the machine's load rather than the workload.
    pub fn of(pool: &[&RunRecord]) -> Self {
        let mut names: Vec<String> = pool
            .iter()
            .flat_map(|r| r.metrics.keys().cloned())
            .filter(|n| !is_timing(n))
            .collect::<std::collections::BTreeSet<_>>()
            .into_iter()
            .collect();
        let mut mean = Vec::new();
        let mut std = Vec::new();
        names.retain(|n| {
            let v: Vec<f64> = pool.iter().map(|r| metric(r, n)).collect();
            let f = five(&v);
            let s = f[1].sqrt();
            if s > 1e-12 * f[0].abs().max(1e-300) && s > 0.0 {
                mean.push(f[0]);
                std.push(s);
                true
            } else {
                false
            }
        });
        Metrics { names, mean, std }
    }

    /// The representation of one workload's runs.
    pub fn represent(&self, workload: &str, runs: &[&RunRecord]) -> Representation {
        let stats = self
            .names
            .iter()
            .enumerate()
            .map(|(j, n)| {
                let v: Vec<f64> = runs
                    .iter()
                    .map(|r| (metric(r, n) - self.mean[j]) / self.std[j])
                    .collect();
                five(&v)
            })
            .collect();
        Representation {
            workload: workload.to_string(),
            stats,
        }
    }
}

/// The distance of each basic workload from the target: per metric, the Mahalanobis distance of the two
/// five-statistic vectors under the covariance pooled over every metric of every workload (its
/// pseudo-inverse, so a singular covariance is no failure), summed over metrics.
pub fn distances(target: &Representation, basics: &[Representation]) -> Result<Vec<f64>> {
    let all: Vec<&[f64; 5]> = std::iter::once(target)
        .chain(basics)
        .flat_map(|r| r.stats.iter())
        .collect();
    if all.len() < 2 {
        return Err(Error::Invalid(
            "no metric varies over the runs: nothing to compare workloads by".into(),
        ));
    }
    let n = all.len() as f64;
    let mut mean = DVector::<f64>::zeros(5);
    for v in &all {
        mean += DVector::from_row_slice(&v[..]);
    }
    mean /= n;
    let mut cov = DMatrix::<f64>::zeros(5, 5);
    for v in &all {
        let d = DVector::from_row_slice(&v[..]) - &mean;
        cov += &d * d.transpose();
    }
    cov /= (n - 1.0).max(1.0);
    // singular values below a millionth of the largest count as zero (the five statistics are nearly collinear)
    let largest = cov.singular_values().max();
    let inv = cov
        .pseudo_inverse(1e-6 * largest.max(f64::MIN_POSITIVE))
        .map_err(|e| Error::Invalid(format!("covariance: {e}")))?;
    Ok(basics
        .iter()
        .map(|b| {
            b.stats
                .iter()
                .zip(&target.stats)
                .map(|(x, t)| {
                    let d = DVector::from_row_slice(&x[..]) - DVector::from_row_slice(&t[..]);
                    (d.transpose() * &inv * &d)[(0, 0)].max(0.0).sqrt()
                })
                .sum()
        })
        .collect())
}

/// RTune's weights: (d_max − d_i) / Σ_k (d_max − d_k); equal weights when every distance is the same. A
/// distance that is not a number is an error.
pub fn weights(d: &[f64]) -> Result<Vec<f64>> {
    if d.iter().any(|x| !x.is_finite()) {
        return Err(Error::Invalid(format!(
            "a workload distance is not a number: {d:?}"
        )));
    }
    Ok(weights_of(d))
}

fn weights_of(d: &[f64]) -> Vec<f64> {
    let max = d.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    let raw: Vec<f64> = d.iter().map(|x| max - x).collect();
    let sum: f64 = raw.iter().sum();
    if sum <= 0.0 || !sum.is_finite() {
        return vec![1.0 / d.len().max(1) as f64; d.len()];
    }
    raw.iter().map(|x| x / sum).collect()
}

/// Splits `n` rows by weights into whole counts that add up to `n` (largest remainders).
pub fn apportion(weights: &[f64], n: usize) -> Vec<usize> {
    let exact: Vec<f64> = weights.iter().map(|w| w * n as f64).collect();
    let mut counts: Vec<usize> = exact.iter().map(|x| x.floor() as usize).collect();
    let mut left = n.saturating_sub(counts.iter().sum());
    let mut order: Vec<usize> = (0..weights.len()).collect();
    order.sort_by(|&a, &b| (exact[b] - exact[b].floor()).total_cmp(&(exact[a] - exact[a].floor())));
    for &i in order.iter().cycle().take(weights.len() * 2) {
        if left == 0 {
            break;
        }
        if weights[i] > 0.0 {
            counts[i] += 1;
            left -= 1;
        }
    }
    counts
}

/// Runs grouped by workload name, in name order.
pub fn by_workload(runs: &[RunRecord]) -> BTreeMap<String, Vec<&RunRecord>> {
    let mut out: BTreeMap<String, Vec<&RunRecord>> = BTreeMap::new();
    for r in runs {
        out.entry(r.workload.clone()).or_default().push(r);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn five_statistics() {
        let f = five(&[1.0, 2.0, 3.0, 4.0, 5.0]);
        assert_eq!(f, [3.0, 2.0, 2.0, 3.0, 4.0]);
    }

    #[test]
    fn weights_favour_the_nearest_and_add_up() {
        let w = weights(&[1.0, 3.0, 2.0]).unwrap();
        assert!((w.iter().sum::<f64>() - 1.0).abs() < 1e-12);
        assert!(w[0] > w[2] && w[2] > w[1]);
        assert_eq!(w[1], 0.0, "the farthest gets nothing");
        assert_eq!(weights(&[2.0, 2.0]).unwrap(), vec![0.5, 0.5]);
        assert!(weights(&[1.0, f64::NAN]).is_err());
        assert!(is_timing("run.read.p99_us") && is_timing("rocksdb.db.get.micros.p50"));
        assert!(!is_timing("l1.block_reads"));
        assert_eq!(apportion(&[0.5, 0.25, 0.25], 10).iter().sum::<usize>(), 10);
        assert_eq!(apportion(&[2.0 / 3.0, 1.0 / 3.0, 0.0], 10), vec![7, 3, 0]);
    }

    #[test]
    fn the_same_workload_is_nearest() {
        let rep = |name: &str, shift: f64| Representation {
            workload: name.into(),
            stats: (0..6)
                .map(|j| {
                    let b = j as f64 * 0.3 + shift;
                    [b, 0.1 + shift.abs(), b - 0.2, b, b + 0.2]
                })
                .collect(),
        };
        let target = rep("t", 0.05);
        let basics = vec![rep("far", 2.0), rep("near", 0.0), rep("mid", 0.7)];
        let d = distances(&target, &basics).unwrap();
        assert!(d[1] < d[2] && d[2] < d[0], "{d:?}");
    }
}

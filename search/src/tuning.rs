//! Endure's nominal (Problem 1) and robust (Problem 2) tuning over (T, h, π).
//!
//! The search is global, because the cost jumps wherever L = ⌈ℓ(T, h)⌉ changes:
//! * For a fixed policy and T, L grows with h (more filter bits, less buffer). Within one L, the paper model's
//!   costs never increase with h (FPRs fall; the level shares, Q and W depend on L only), so the best h of a region
//!   is its right end: h_max or the h at which L would step up. The code variant's Q and W use the real depth ℓ,
//!   so there each region is also searched in h with argmin's Brent minimiser.
//! * This gives a profile objective in T alone, scanned on a log-spaced grid for both policies; the best grid
//!   cells are refined with argmin's Brent minimiser.

use crate::robust::kl_worst_case;
use argmin::core::{CostFunction, Error as ArgminError, Executor, State};
use argmin::solver::brent::BrentOpt;
use cosine_cost_model::endure::{dot, EndureSystem, EndureVariant, Policy, Tuning};
use serde::Serialize;
use thiserror::Error;

/// Why a tuning problem is ill-posed.
#[derive(Debug, Error, Clone, PartialEq)]
#[non_exhaustive]
pub enum TuneError {
    /// ρ is negative or not a number.
    #[error("rho must be a non-negative number, got {0}")]
    Rho(f64),
    /// A workload share is outside [0, 1] or the shares do not sum to 1.
    #[error("workload (z0, z1, q, w) = {0:?} must be four fractions in [0, 1] summing to 1")]
    Workload([f64; 4]),
    /// The system parameters are unusable.
    #[error("invalid system: {0}")]
    System(String),
}

/// A tuning and what it costs.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct TuneResult {
    /// The tuning Φ.
    pub tuning: Tuning,
    /// m_buf in bits.
    pub buffer_bits: f64,
    /// L at this tuning.
    pub levels: u32,
    /// c(Φ) = (Z0, Z1, Q, W).
    pub costs: [f64; 4],
    /// C(w, Φ) at the expected workload.
    pub cost: f64,
    /// The worst case over the KL ball of radius ρ (equal to `cost` when ρ = 0).
    pub worst_case_cost: f64,
    /// The worst-case workload in the ball.
    pub worst_case_workload: [f64; 4],
}

/// One tuning problem: a system, an expected workload and a radius ρ.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct TuneProblem {
    /// System parameters.
    pub system: EndureSystem,
    /// Expected workload (z0, z1, q, w).
    pub workload: [f64; 4],
    /// KL radius ρ (0 = nominal).
    pub rho: f64,
}

/// Grid points over T per policy.
const T_GRID: usize = 64;

impl TuneProblem {
    /// Builds and validates a problem.
    pub fn new(system: EndureSystem, workload: [f64; 4], rho: f64) -> Result<Self, TuneError> {
        if !(rho.is_finite() && rho >= 0.0) {
            return Err(TuneError::Rho(rho));
        }
        let sum: f64 = workload.iter().sum();
        if workload
            .iter()
            .any(|x| !(x.is_finite() && (0.0..=1.0).contains(x)))
            || (sum - 1.0).abs() > 1e-9
        {
            return Err(TuneError::Workload(workload));
        }
        let s = &system;
        let positive = [s.entries, s.entry_bits, s.entries_per_page, s.memory_bits];
        if positive.iter().any(|x| !(x.is_finite() && *x > 0.0)) {
            return Err(TuneError::System(
                "entries, entry size, page size and memory must be positive".into(),
            ));
        }
        if s.memory_bits < s.min_buffer_bits {
            return Err(TuneError::System(format!(
                "memory of {} bits is below the {} bits that must stay for the buffer",
                s.memory_bits, s.min_buffer_bits
            )));
        }
        if !(s.min_size_ratio >= 2.0
            && s.max_size_ratio >= s.min_size_ratio
            && s.max_size_ratio.is_finite())
        {
            return Err(TuneError::System(
                "size ratio range must satisfy 2 <= min <= max".into(),
            ));
        }
        if !(s.selectivity.is_finite() && (0.0..=1.0).contains(&s.selectivity)) {
            return Err(TuneError::System("selectivity must be in [0, 1]".into()));
        }
        if !(s.asymmetry.is_finite() && s.asymmetry >= 0.0) {
            return Err(TuneError::System(
                "read/write asymmetry must be non-negative".into(),
            ));
        }
        Ok(TuneProblem {
            system,
            workload,
            rho,
        })
    }

    /// The objective: C(w, Φ) when ρ = 0, else the worst case over the KL ball.
    pub fn objective(&self, tuning: &Tuning) -> f64 {
        let c = self.system.costs(tuning);
        self.objective_of_costs(&c)
    }

    fn objective_of_costs(&self, c: &[f64; 4]) -> f64 {
        if self.rho == 0.0 {
            dot(&self.workload, c)
        } else {
            kl_worst_case(&self.workload, c, self.rho).value
        }
    }

    /// Describes a tuning: its costs, nominal and worst-case totals.
    pub fn evaluate(&self, tuning: Tuning) -> TuneResult {
        let costs = self.system.costs(&tuning);
        let wc = kl_worst_case(&self.workload, &costs, self.rho);
        TuneResult {
            tuning,
            buffer_bits: self.system.buffer_bits(tuning.bits_per_entry),
            levels: self.system.levels(tuning.size_ratio, tuning.bits_per_entry),
            costs,
            cost: dot(&self.workload, &costs),
            worst_case_cost: wc.value,
            worst_case_workload: wc.workload,
        }
    }

    /// The h at which the tree of size ratio `t` has exactly `levels` levels at its fullest buffer use
    /// (ℓ = levels), if inside [0, h_max].
    fn region_end(&self, t: f64, levels: u32) -> Option<f64> {
        let s = &self.system;
        let m_buf = s.entries * s.entry_bits / (t.powi(levels as i32) - 1.0);
        let h = (s.memory_bits - m_buf) / s.entries;
        // step just inside the region so that ⌈ℓ⌉ is still `levels`
        let h = h - 1e-9 * h.abs().max(1.0);
        (h >= 0.0 && h <= s.max_bits_per_entry()).then_some(h)
    }

    /// The best h for a policy and T, with its objective.
    fn best_h(&self, policy: Policy, t: f64) -> (f64, f64) {
        let s = &self.system;
        let h_max = s.max_bits_per_entry();
        let l_lo = s.levels(t, 0.0);
        let l_hi = s.levels(t, h_max);
        let eval = |h: f64| {
            self.objective(&Tuning {
                policy,
                size_ratio: t,
                bits_per_entry: h,
            })
        };
        let mut ends: Vec<f64> = (l_lo..l_hi).filter_map(|l| self.region_end(t, l)).collect();
        ends.push(h_max);
        let mut best = (f64::NAN, f64::INFINITY);
        let mut start = 0.0;
        for &end in &ends {
            let mut cand = vec![end];
            if s.variant == EndureVariant::Code && end > start {
                cand.push(start);
                if let Some(h) = minimize_1d(eval, start, end) {
                    cand.push(h);
                }
            }
            for h in cand {
                let v = eval(h);
                if v < best.1 {
                    best = (h, v);
                }
            }
            start = end + 2e-9 * end.abs().max(1.0);
        }
        best
    }

    /// Solves the problem: the best (π, T, h) over both policies, T in the system's range, h in [0, h_max].
    pub fn solve(&self) -> TuneResult {
        let s = &self.system;
        let (t_lo, t_hi) = (s.min_size_ratio, s.max_size_ratio);
        let grid: Vec<f64> = (0..T_GRID)
            .map(|i| {
                if T_GRID == 1 || t_hi == t_lo {
                    t_lo
                } else {
                    t_lo * (t_hi / t_lo).powf(i as f64 / (T_GRID - 1) as f64)
                }
            })
            .collect();
        let mut best: Option<(Tuning, f64)> = None;
        let mut consider = |tuning: Tuning, v: f64| {
            if best.is_none_or(|(_, b)| v < b) {
                best = Some((tuning, v));
            }
        };
        for policy in Policy::BOTH {
            let profile: Vec<(f64, f64)> = grid.iter().map(|&t| self.best_h(policy, t)).collect();
            for (i, &(h, v)) in profile.iter().enumerate() {
                consider(
                    Tuning {
                        policy,
                        size_ratio: grid[i],
                        bits_per_entry: h,
                    },
                    v,
                );
            }
            // refine around the best two grid cells of this policy
            let mut order: Vec<usize> = (0..grid.len()).collect();
            order.sort_by(|&a, &b| profile[a].1.total_cmp(&profile[b].1));
            for &i in order.iter().take(2) {
                let lo = grid[i.saturating_sub(1)];
                let hi = grid[(i + 1).min(grid.len() - 1)];
                if hi <= lo {
                    continue;
                }
                if let Some(t) = minimize_1d(|t| self.best_h(policy, t).1, lo, hi) {
                    let (h, v) = self.best_h(policy, t);
                    consider(
                        Tuning {
                            policy,
                            size_ratio: t,
                            bits_per_entry: h,
                        },
                        v,
                    );
                }
            }
        }
        let (tuning, _) = best.expect("the grid is never empty");
        self.evaluate(tuning)
    }
}

/// A one-dimensional cost function for argmin.
struct OneD<F: Fn(f64) -> f64>(F);

impl<F: Fn(f64) -> f64> CostFunction for OneD<F> {
    type Param = f64;
    type Output = f64;
    fn cost(&self, x: &f64) -> Result<f64, ArgminError> {
        Ok((self.0)(*x))
    }
}

/// Brent's minimiser (argmin) on [lo, hi].
fn minimize_1d<F: Fn(f64) -> f64>(f: F, lo: f64, hi: f64) -> Option<f64> {
    if !(hi > lo) {
        return None;
    }
    let solver = BrentOpt::new(lo, hi).set_tolerance(1e-8, 1e-9 * (hi - lo).max(1e-12));
    Executor::new(OneD(f), solver)
        .configure(|s| s.max_iters(100))
        .timer(false)
        .run()
        .ok()
        .and_then(|r| r.state().get_best_param().copied())
}

/// Solves nominal (ρ = 0) or robust tuning for a system and expected workload.
pub fn tune(system: EndureSystem, workload: [f64; 4], rho: f64) -> Result<TuneResult, TuneError> {
    Ok(TuneProblem::new(system, workload, rho)?.solve())
}

#[cfg(test)]
mod tests {
    use super::*;
    use cosine_design::ENDURE_EXPECTED;

    /// Brute force: the minimum over a fine (π, T, h) grid.
    fn brute(p: &TuneProblem, t_step: f64, h_steps: usize) -> f64 {
        let h_max = p.system.max_bits_per_entry();
        let mut best = f64::INFINITY;
        for policy in Policy::BOTH {
            let mut t = 2.0;
            while t <= 100.0 + 1e-9 {
                for j in 0..=h_steps {
                    let h = h_max * j as f64 / h_steps as f64;
                    best = best.min(p.objective(&Tuning {
                        policy,
                        size_ratio: t,
                        bits_per_entry: h,
                    }));
                }
                t += t_step;
            }
        }
        best
    }

    #[test]
    fn nominal_matches_brute_force_within_a_tenth_of_a_percent() {
        for (i, w) in ENDURE_EXPECTED.iter().enumerate() {
            for variant in [EndureVariant::Paper, EndureVariant::Code] {
                let sys = EndureSystem {
                    variant,
                    ..Default::default()
                };
                let p = TuneProblem::new(sys, *w, 0.0).unwrap();
                let got = p.solve();
                let grid = brute(&p, 0.1, 400);
                assert!(
                    got.worst_case_cost <= grid * 1.001,
                    "w{i} {variant:?}: {} vs grid {}",
                    got.cost,
                    grid
                );
            }
        }
    }

    #[test]
    fn robust_matches_brute_force_within_a_tenth_of_a_percent() {
        for (i, w) in ENDURE_EXPECTED.iter().enumerate().step_by(2) {
            for rho in [0.25, 1.0, 2.0] {
                let p = TuneProblem::new(EndureSystem::default(), *w, rho).unwrap();
                let got = p.solve();
                let grid = brute(&p, 0.5, 120);
                assert!(
                    got.worst_case_cost <= grid * 1.001,
                    "w{i} rho={rho}: {} vs grid {}",
                    got.worst_case_cost,
                    grid
                );
                assert!(got.worst_case_cost >= got.cost - 1e-12);
            }
        }
    }

    #[test]
    fn write_heavy_prefers_small_or_tiered_read_heavy_large_leveled() {
        let w = tune(EndureSystem::default(), [0.01, 0.01, 0.01, 0.97], 0.0).unwrap();
        let r = tune(EndureSystem::default(), [0.49, 0.49, 0.01, 0.01], 0.0).unwrap();
        assert!(w.costs[3] < r.costs[3]);
        assert_eq!(r.tuning.policy, Policy::Leveling);
        assert!(r.tuning.size_ratio > w.tuning.size_ratio || w.tuning.policy == Policy::Tiering);
    }

    #[test]
    fn bad_inputs() {
        let s = EndureSystem::default();
        assert_eq!(
            TuneProblem::new(s, [0.25; 4], -0.1),
            Err(TuneError::Rho(-0.1))
        );
        assert!(matches!(
            TuneProblem::new(s, [0.5, 0.5, 0.5, -0.5], 0.0),
            Err(TuneError::Workload(_))
        ));
        assert!(matches!(
            TuneProblem::new(s, [0.3, 0.3, 0.3, 0.3], 0.0),
            Err(TuneError::Workload(_))
        ));
        let mut tiny = s;
        tiny.memory_bits = 100.0;
        assert!(matches!(
            TuneProblem::new(tiny, [0.25; 4], 0.0),
            Err(TuneError::System(_))
        ));
    }
}

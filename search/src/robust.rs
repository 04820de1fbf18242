//! Endure's robust objective: the worst expected cost over the KL-divergence ball of radius ρ around the
//! expected workload, evaluated through its dual (Endure Eq. 9-10; MODEL.md §11.3):
//!
//! g(c) = min_{λ > 0} ρλ + λ ln Σ_i w_i e^{c_i/λ},
//!
//! a one-dimensional convex problem in λ. Its stationarity condition g'(λ) = ρ + ln S − E_ŵ[c − c_max]/λ = 0
//! (S the normaliser of the tilt, g' increasing because g'' = Var_ŵ(c)/λ³ ≥ 0) is solved by Newton's method
//! in ln λ, safeguarded by bisection: about ten iterations, so that the tuner can afford the robust objective at
//! every point it visits. `kl_worst_case_brent` solves the same problem with argmin's Brent minimiser and is
//! kept as a cross-check. The maximising workload is the exponential tilt ŵ_i ∝ w_i e^{c_i/λ}. When
//! −ln Σ_{i ∈ argmax c} w_i ≤ ρ the ball reaches the vertex and the answer is max c exactly (λ → 0).

use argmin::core::{CostFunction, Error as ArgminError, Executor, State};
use argmin::solver::brent::BrentOpt;

/// The worst case over the KL ball and the workload that attains it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct WorstCase {
    /// max over the ball of ŵ · c.
    pub value: f64,
    /// The dual variable λ at the optimum (None when the worst case is the vertex max c, or ρ = 0).
    pub lambda: Option<f64>,
    /// The maximising workload ŵ.
    pub workload: [f64; 4],
}

struct Dual<'a> {
    w: &'a [f64],
    c: &'a [f64],
    c_max: f64,
    rho: f64,
}

impl Dual<'_> {
    /// ρλ + λ ln Σ w_i e^{c_i/λ}, computed as c_max + ρλ + λ ln Σ w_i e^{(c_i − c_max)/λ}.
    fn value(&self, lambda: f64) -> f64 {
        let s: f64 = self
            .w
            .iter()
            .zip(self.c)
            .filter(|(w, _)| **w > 0.0)
            .map(|(w, c)| w * ((c - self.c_max) / lambda).exp())
            .sum();
        self.c_max + self.rho * lambda + lambda * s.ln()
    }
}

impl CostFunction for Dual<'_> {
    type Param = f64;
    type Output = f64;
    fn cost(&self, u: &f64) -> Result<f64, ArgminError> {
        Ok(self.value(u.exp()))
    }
}

/// KL divergence Σ a_i ln(a_i / b_i).
pub fn kl_divergence(a: &[f64; 4], b: &[f64; 4]) -> f64 {
    a.iter()
        .zip(b)
        .filter(|(x, _)| **x > 0.0)
        .map(|(x, y)| x * (x / y).ln())
        .sum()
}

fn tilt(w: &[f64; 4], c: &[f64; 4], c_max: f64, lambda: f64) -> [f64; 4] {
    let mut t = [0.0; 4];
    let mut s = 0.0;
    for i in 0..4 {
        if w[i] > 0.0 {
            t[i] = w[i] * ((c[i] - c_max) / lambda).exp();
            s += t[i];
        }
    }
    t.map(|x| x / s)
}

/// The worst case over the KL ball for any number of operation types: (value, λ, c_max, tolerance), with
/// λ = None when the answer is the nominal cost (ρ = 0) or the vertex max c.
fn worst(w: &[f64], c: &[f64], rho: f64) -> (f64, Option<f64>, f64, f64) {
    let nominal: f64 = w.iter().zip(c).map(|(a, b)| a * b).sum();
    if rho <= 0.0 {
        return (nominal, None, f64::NAN, 0.0);
    }
    let support = || w.iter().zip(c).filter(|(w, _)| **w > 0.0);
    let c_max = support().map(|(_, c)| *c).fold(f64::NEG_INFINITY, f64::max);
    let c_min = support().map(|(_, c)| *c).fold(f64::INFINITY, f64::min);
    let tol = 1e-12 * c_max.abs().max(1e-300);
    let at_max: f64 = support()
        .filter(|(_, c)| c_max - **c <= tol)
        .map(|(w, _)| *w)
        .sum();
    if -at_max.ln() <= rho || c_max - c_min <= tol {
        return (c_max, None, c_max, tol);
    }
    let lambda = solve_lambda(w, c, c_max, rho, c_max - c_min);
    let value = Dual { w, c, c_max, rho }
        .value(lambda)
        .min(c_max)
        .max(nominal);
    (value, Some(lambda), c_max, tol)
}

/// The worst-case expected cost of cost vector `c` over {ŵ : KL(ŵ‖w) ≤ ρ}.
pub fn kl_worst_case(w: &[f64; 4], c: &[f64; 4], rho: f64) -> WorstCase {
    let (value, lambda, c_max, tol) = worst(w, c, rho);
    let workload = match lambda {
        Some(l) => tilt(w, c, c_max, l),
        None if rho <= 0.0 => *w,
        None => {
            // the vertex: all weight on the costliest types, in proportion to their expected shares
            let at_max: f64 = (0..4)
                .filter(|&i| w[i] > 0.0 && c_max - c[i] <= tol)
                .map(|i| w[i])
                .sum();
            std::array::from_fn(|i| {
                if w[i] > 0.0 && c_max - c[i] <= tol {
                    w[i] / at_max
                } else {
                    0.0
                }
            })
        }
    };
    WorstCase {
        value,
        lambda,
        workload,
    }
}

/// g'(λ) and d g'(λ)/d ln λ.
fn dual_slope(w: &[f64], c: &[f64], c_max: f64, rho: f64, lambda: f64) -> (f64, f64) {
    let (mut s, mut m1, mut m2) = (0.0, 0.0, 0.0);
    for i in 0..w.len() {
        if w[i] > 0.0 {
            let d = c[i] - c_max;
            let e = w[i] * (d / lambda).exp();
            s += e;
            m1 += e * d;
            m2 += e * d * d;
        }
    }
    let mean = m1 / s;
    let var = (m2 / s - mean * mean).max(0.0);
    (rho + s.ln() - mean / lambda, var / (lambda * lambda))
}

/// The root of g'(λ) (increasing in λ, negative at 0+ and ρ > 0 at ∞) by safeguarded Newton in u = ln λ.
fn solve_lambda(w: &[f64], c: &[f64], c_max: f64, rho: f64, spread: f64) -> f64 {
    let slope = |u: f64| dual_slope(w, c, c_max, rho, u.exp());
    let (mut lo, mut hi) = ((spread * 1e-3).ln(), (spread * 10.0 / rho.min(1.0)).ln());
    while slope(lo).0 > 0.0 && lo > -700.0 {
        lo -= 5.0;
    }
    while slope(hi).0 < 0.0 && hi < 700.0 {
        hi += 5.0;
    }
    let mut u = 0.5 * (lo + hi);
    for _ in 0..100 {
        let (g, dg) = slope(u);
        if g > 0.0 {
            hi = u;
        } else {
            lo = u;
        }
        let mut next = if dg > 0.0 { u - g / dg } else { f64::NAN };
        if !(next > lo && next < hi) {
            next = 0.5 * (lo + hi);
        }
        if (next - u).abs() < 1e-13 * u.abs().max(1.0) || hi - lo < 1e-13 {
            u = next;
            break;
        }
        u = next;
    }
    u.exp()
}

/// The worst-case expected cost over the KL ball for any number of operation types (the search's six).
pub fn kl_worst_value(w: &[f64], c: &[f64], rho: f64) -> f64 {
    worst(w, c, rho).0
}

/// The same worst case with the dual minimised by argmin's Brent method over ln λ (slower; a cross-check).
pub fn kl_worst_case_brent(w: &[f64; 4], c: &[f64; 4], rho: f64) -> f64 {
    let quick = kl_worst_case(w, c, rho);
    if quick.lambda.is_none() {
        return quick.value;
    }
    let c_max = c
        .iter()
        .zip(w)
        .filter(|(_, w)| **w > 0.0)
        .map(|(c, _)| *c)
        .fold(f64::NEG_INFINITY, f64::max);
    let c_min = c
        .iter()
        .zip(w)
        .filter(|(_, w)| **w > 0.0)
        .map(|(c, _)| *c)
        .fold(f64::INFINITY, f64::min);
    let spread = c_max - c_min;
    let (lo, hi) = ((spread * 1e-6).ln(), (spread * 1e8 / rho.min(1.0)).ln());
    let solver = BrentOpt::new(lo, hi).set_tolerance(1e-10, 1e-10);
    let dual = Dual { w, c, c_max, rho };
    let best_u = Executor::new(Dual { w, c, c_max, rho }, solver)
        .configure(|s| s.max_iters(200))
        .timer(false)
        .run()
        .ok()
        .and_then(|r| r.state().get_best_param().copied())
        .unwrap_or(hi);
    dual.value(best_u.exp())
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// The primal by bisection along the tilt family: the ŵ(λ) with KL = ρ, and its cost.
    fn primal(w: &[f64; 4], c: &[f64; 4], rho: f64) -> f64 {
        let c_max = c.iter().cloned().fold(f64::MIN, f64::max);
        let (mut lo, mut hi) = (1e-9f64.ln(), 1e12f64.ln());
        for _ in 0..300 {
            let mid = 0.5 * (lo + hi);
            if kl_divergence(&tilt(w, c, c_max, mid.exp()), w) > rho {
                lo = mid;
            } else {
                hi = mid;
            }
        }
        let t = tilt(w, c, c_max, hi.exp());
        t.iter().zip(c).map(|(a, b)| a * b).sum()
    }

    #[test]
    fn rho_zero_is_nominal() {
        let w = [0.25; 4];
        let c = [1.0, 2.0, 3.0, 4.0];
        assert_eq!(kl_worst_case(&w, &c, 0.0).value, 2.5);
    }

    #[test]
    fn vertex_case_is_exact() {
        // −ln 0.25 = 1.386 ≤ 2: the ball contains the vertex of the costliest type
        let w = [0.25; 4];
        let c = [1.0, 2.0, 3.0, 4.0];
        let r = kl_worst_case(&w, &c, 2.0);
        assert_eq!(r.value, 4.0);
        assert_eq!(r.workload, [0.0, 0.0, 0.0, 1.0]);
    }

    proptest! {
        #[test]
        fn dual_equals_primal(a in 0.01f64..1.0, b in 0.01f64..1.0, cc in 0.01f64..1.0, d in 0.01f64..1.0,
                              c in proptest::array::uniform4(0.0f64..50.0), rho in 0.01f64..1.3) {
            let s = a + b + cc + d;
            let w = [a / s, b / s, cc / s, d / s];
            let r = kl_worst_case(&w, &c, rho);
            let nominal: f64 = w.iter().zip(&c).map(|(x, y)| x * y).sum();
            let c_max = c.iter().cloned().fold(f64::MIN, f64::max);
            prop_assert!(r.value >= nominal - 1e-9 && r.value <= c_max + 1e-9);
            if r.lambda.is_some() {
                let p = primal(&w, &c, rho);
                prop_assert!((r.value - p).abs() <= 1e-6 * c_max.max(1.0), "dual {} primal {}", r.value, p);
                prop_assert!(kl_divergence(&r.workload, &w) <= rho * (1.0 + 1e-4) + 1e-9);
                let brent = kl_worst_case_brent(&w, &c, rho);
                prop_assert!((r.value - brent).abs() <= 1e-6 * c_max.max(1.0), "newton {} brent {}", r.value, brent);
            }
        }
    }
}

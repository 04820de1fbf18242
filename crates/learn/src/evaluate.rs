//! The held-out evaluation of tuning (issue 14's table): on targets that never entered the repository, each
//! method picks a configuration, and the picks are then measured side by side.
//!
//! Methods: the engine's defaults (the baseline), the analytical model's pick, `tune` (the tuning pipeline as
//! `cosine learn tune` runs it: RTune's pipeline, with the departures `tune` lists, the model's pick among the
//! configurations it measures), `rtune` (the same without the model's pick: RTune's pipeline alone, its
//! candidates measured; a budget of one run less than `tune`'s), `tune+model` (`tune` with the analytical
//! model's predicted I/Os among the surrogate's inputs), `nearest` (`tune` matching the nearest basic workload
//! alone instead of the combined one; both ablations measure the model's pick too, so where it wins they
//! return the same configuration as `tune`),
//! `best-probe` (the best of the repository configurations `tune` probed the target with: what the repository
//! alone gives, without the model, the network and the search), and `random` (uniform random configurations, as
//! many measured runs as `tune` made, the best measured kept; drawn from the seed and the target's name, so each
//! target gets its own).
//!
//! A method's own pick is judged on fresh runs, not on the measurement that picked it (picking the best of
//! several noisy runs flatters it): every pick and the defaults are run `repeats` times, in an order rotated
//! each round, and each is scored by its median outcome against the defaults' median — RTune's Eq. 4 (the
//! geometric mean of the time, rate, write- and space-amplification ratios) and the I/O ratio.

use crate::collect::{measure_one, Config, Measurer};
use crate::repo::{Outcome, RunRecord, Source};
use crate::tune::{measured_score, ratios, tune, Matching, Objective, TuneSpec};
use crate::{Error, Result};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use serde::Serialize;

/// The methods compared, in the table's order.
pub const METHODS: [&str; 8] = [
    "defaults",
    "model",
    "tune",
    "rtune",
    "best-probe",
    "tune+model",
    "nearest",
    "random",
];

/// One method's pick on one target and seed, measured side by side with the others.
#[derive(Clone, Debug, Serialize, serde::Deserialize)]
pub struct Pick {
    /// The method.
    pub method: String,
    /// The configuration's id.
    pub config: String,
    /// The configuration's settings.
    pub settings: serde_json::Value,
    /// Runs the method measured to make its pick (0 for the defaults and the model).
    pub tuning_runs: usize,
    /// Median ratios to the defaults over the repeats: time, rate, WA, SA, I/Os.
    pub ratios: Vec<f64>,
    /// RTune's score (Eq. 4) of the median ratios (not a number, written null, when the method failed).
    #[serde(deserialize_with = "nan_if_null")]
    pub score: f64,
    /// The I/O ratio (the defaults' I/Os per operation over the pick's).
    #[serde(deserialize_with = "nan_if_null")]
    pub io_ratio: f64,
    /// Why the method has no pick, when it failed (e.g. the surrogate refused).
    pub failed: Option<String>,
}

/// One target at one seed.
#[derive(Clone, Debug, Serialize, serde::Deserialize)]
pub struct TargetRun {
    /// The target.
    pub target: String,
    /// The seed.
    pub seed: u64,
    /// Every method's pick.
    pub picks: Vec<Pick>,
}

/// A number JSON wrote as null (serde_json writes NaN so) read back as NaN.
fn nan_if_null<'de, D: serde::Deserializer<'de>>(d: D) -> std::result::Result<f64, D::Error> {
    use serde::Deserialize;
    Ok(Option::<f64>::deserialize(d)?.unwrap_or(f64::NAN))
}

fn median(mut v: Vec<f64>) -> f64 {
    if v.is_empty() {
        return f64::NAN;
    }
    v.sort_by(f64::total_cmp);
    let n = v.len();
    if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    }
}

/// The median outcome of runs, field by field.
pub fn median_outcome(runs: &[Outcome]) -> Outcome {
    let f = |g: &dyn Fn(&Outcome) -> f64| median(runs.iter().map(g).collect());
    Outcome {
        throughput: f(&|o| o.throughput),
        seconds: f(&|o| o.seconds),
        p99_us: f(&|o| o.p99_us),
        write_amplification: f(&|o| o.write_amplification),
        space_amplification: f(&|o| o.space_amplification),
        ios_per_op: runs
            .iter()
            .all(|o| o.ios_per_op.is_some())
            .then(|| f(&|o| o.ios_per_op.unwrap_or(0.0))),
        peak_resident_bytes: None,
    }
}

/// Evaluates every method on `target` at `seed`; `template` gives the tuning settings (its target and seed
/// are replaced). `progress` hears a line per step.
pub fn evaluate_target(
    m: &dyn Measurer,
    repo_runs: &[RunRecord],
    template: &TuneSpec,
    repeats: usize,
    progress: &mut dyn FnMut(&str),
) -> Result<TargetRun> {
    let space = m.space();
    let memory = template.memory;
    let target = &template.target;
    let seed = template.seed;
    let (dp, ds) = m.defaults(memory);
    let defaults = Config::new(space, Source::Default, dp, ds, memory);
    // each method's pick: (method, config, tuning runs, failure)
    let mut picks: Vec<(String, Option<Config>, usize, Option<String>)> = Vec::new();
    picks.push(("defaults".into(), Some(defaults.clone()), 0, None));
    let model = m
        .model_pick(target, memory)
        .map(|(u, s)| Config::new(space, Source::Model, u, s, memory));
    let has_model = model.is_some();
    let model_failed = model.is_none().then(|| {
        "no model pick (the engine has no model, or its search found no design at this memory)"
            .to_string()
    });
    picks.push(("model".into(), model, 0, model_failed));
    let mut tune_runs = 0;
    for (method, probe, feature, matching) in [
        ("tune", true, false, Matching::Combined),
        ("rtune", false, false, Matching::Combined),
        ("tune+model", true, true, Matching::Combined),
        ("nearest", true, false, Matching::Nearest),
    ] {
        progress(&format!("{} seed {seed}: {method}", target.name));
        let spec = TuneSpec {
            model_probe: probe,
            model_feature: feature,
            matching,
            ..template.clone()
        };
        match tune(m, repo_runs, &spec, &mut |_| {}) {
            Ok(r) => {
                let runs = 1 + r.probes.len() + usize::from(r.model.is_some()) + r.candidates.len();
                if method == "tune" {
                    tune_runs = runs;
                }
                let best = &r.chosen;
                // (the settings are what is measured; a model pick's recorded point is only the nearest)
                let c = Config {
                    source: Source::Tuned,
                    point: space.point(&best.run.knobs).unwrap_or_default(),
                    knobs: best.run.knobs.clone(),
                    settings: best.run.settings.clone(),
                    id: best.config.clone(),
                };
                picks.push((method.into(), Some(c), runs, None));
                if method == "tune" {
                    let probe = r
                        .probes
                        .iter()
                        .max_by(|a, b| a.measured_score.total_cmp(&b.measured_score))
                        .map(|p| Config {
                            source: Source::Probe,
                            point: space.point(&p.run.knobs).unwrap_or_default(),
                            knobs: p.run.knobs.clone(),
                            settings: p.run.settings.clone(),
                            id: p.config.clone(),
                        });
                    let failed = probe.is_none().then(|| "no probe".to_string());
                    picks.push(("best-probe".into(), probe, 1 + r.probes.len(), failed));
                }
            }
            Err(e) => {
                if method == "tune" {
                    picks.push(("tune".into(), None, 0, Some(e.to_string())));
                    picks.push(("best-probe".into(), None, 0, Some(e.to_string())));
                } else {
                    picks.push((method.into(), None, 0, Some(e.to_string())));
                }
            }
        }
    }
    // random search with tune's budget: the defaults and uniform random configurations, best measured
    let budget = if tune_runs > 0 {
        tune_runs
    } else {
        1 + template.probes + usize::from(has_model) + template.verify.max(1)
    };
    progress(&format!(
        "{} seed {seed}: random ({budget} runs)",
        target.name
    ));
    let name_hash = target.name.bytes().fold(0xcbf2_9ce4_8422_2325u64, |h, b| {
        (h ^ b as u64).wrapping_mul(0x100_0000_01b3)
    });
    let mut rng = StdRng::seed_from_u64(seed ^ name_hash);
    let base = measure_one(m, target, &defaults, memory, seed)?;
    let mut best: Option<(f64, Config)> = None;
    for _ in 1..budget {
        let u: Vec<f64> = (0..space.dim()).map(|_| rng.random::<f64>()).collect();
        let s = m.settings(&u, memory)?;
        let c = Config::new(space, Source::Random, u, s, memory);
        let r = measure_one(m, target, &c, memory, seed)?;
        let score = measured_score(&ratios(&r.outcome, &base.outcome), template.objective);
        if best.as_ref().is_none_or(|(b, _)| score > *b) {
            best = Some((score, c));
        }
    }
    let random = best.map(|(_, c)| c);
    let random_failed = random
        .is_none()
        .then(|| "a budget of one run is the defaults alone".to_string());
    picks.push(("random".into(), random, budget, random_failed));
    // the picks side by side: `repeats` rounds, the order rotated each round
    progress(&format!(
        "{} seed {seed}: measuring the picks side by side, {repeats} rounds",
        target.name
    ));
    let live: Vec<usize> = (0..picks.len()).filter(|&i| picks[i].1.is_some()).collect();
    let mut outcomes: Vec<Vec<Outcome>> = vec![Vec::new(); picks.len()];
    for round in 0..repeats.max(1) {
        for k in 0..live.len() {
            let i = live[(k + round) % live.len()];
            let c = picks[i]
                .1
                .as_ref()
                .expect("live picks have a configuration");
            let r = measure_one(m, target, c, memory, seed + 1000 + round as u64)?;
            outcomes[i].push(r.outcome);
        }
    }
    let base = median_outcome(&outcomes[0]);
    let picks = picks
        .into_iter()
        .enumerate()
        .map(|(i, (method, c, runs, failed))| {
            let (ratios_v, score, io) = if outcomes[i].is_empty() {
                (Vec::new(), f64::NAN, f64::NAN)
            } else {
                let rt = ratios(&median_outcome(&outcomes[i]), &base);
                (
                    rt.to_vec(),
                    measured_score(&rt, Objective::Rtune),
                    measured_score(&rt, Objective::Ios),
                )
            };
            Pick {
                method,
                config: c.as_ref().map_or(String::new(), |c| c.id.clone()),
                settings: c.map_or(serde_json::Value::Null, |c| c.settings),
                tuning_runs: runs,
                ratios: ratios_v,
                score,
                io_ratio: io,
                failed,
            }
        })
        .collect();
    Ok(TargetRun {
        target: target.name.clone(),
        seed,
        picks,
    })
}

/// A table cell's figures: the median (the mean of the middle two of an even count), the least and the
/// largest of the finite values; None when there is none.
pub fn spread(values: &[f64]) -> Option<(f64, f64, f64)> {
    let v: Vec<f64> = values.iter().copied().filter(|x| x.is_finite()).collect();
    if v.is_empty() {
        return None;
    }
    let lo = v.iter().copied().fold(f64::INFINITY, f64::min);
    let hi = v.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    Some((median(v), lo, hi))
}

/// Checks a request before any run: at least one repeat.
pub fn check(repeats: usize) -> Result<()> {
    if repeats == 0 {
        return Err(Error::Invalid("--repeats must be at least 1".into()));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn medians_field_by_field() {
        let o = |t: f64, io: Option<f64>| Outcome {
            throughput: t,
            seconds: 10.0 / t,
            ios_per_op: io,
            ..Outcome::default()
        };
        let m = median_outcome(&[o(1.0, Some(3.0)), o(5.0, Some(1.0)), o(2.0, Some(2.0))]);
        assert_eq!(m.throughput, 2.0);
        assert_eq!(m.seconds, 5.0);
        assert_eq!(m.ios_per_op, Some(2.0));
        assert_eq!(
            median_outcome(&[o(1.0, None), o(2.0, Some(1.0))]).ios_per_op,
            None
        );
        assert!(check(0).is_err());
        assert_eq!(spread(&[1.0, 3.0]), Some((2.0, 1.0, 3.0)));
        assert_eq!(spread(&[3.0, f64::NAN, 1.0, 2.0]), Some((2.0, 1.0, 3.0)));
        assert_eq!(spread(&[f64::NAN]), None);
    }
}

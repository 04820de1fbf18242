//! The tuning pipeline (RTune Fig. 2), with one step RTune leaves out: the genetic search's best candidates are
//! measured on the target, and the best measured one is returned.
//!
//! 1. Probe: the target runs the engine's defaults (the baseline every score is against), the `probes`
//!    repository configurations that scored best over the basic workloads, and (unless turned off, and where the
//!    engine has one) the analytical model's pick for the target, which takes no further part (not in
//!    matching, training or the search) but is returned when nothing else measured beats it: the model is fast
//!    and explains itself, measured runs catch what it misses.
//! 2. Represent and match: the target's and each basic workload's five statistics per internal metric over
//!    those same configurations; Mahalanobis distances; weights (RTune §3.2.2), or the nearest workload alone.
//! 3. Combine: each basic workload gives its round(w_i · n) best runs (best against its own defaults).
//! 4. Learn: the surrogate maps a configuration (and, unless turned off, the analytical model's predicted I/Os
//!    on the target) to its outcomes as log-ratios to its workload's defaults; a 5-fold cross-validation by
//!    configuration checks it, and the pipeline refuses to go on when the surrogate's rank correlation on
//!    configurations it did not see is below the floor.
//! 5. Search: RTune's genetic algorithm over the knob space with the surrogate's score as fitness.
//! 6. Verify: the `verify` best distinct candidates are measured on the target; the best configuration measured
//!    on the target, candidates, probes and the model's pick alike, is returned.
//!
//! Scores: the search's fitness is [`Fitness::Geometric`], Eq. 4 (the geometric mean of T_D/T, R/R_D, WA_D/WA,
//! SA_D/SA; `cosine learn`'s default), or [`Fitness::Mean`], RTune's Eq. 2 with equal weights (their mean), each
//! predicted ratio kept within the range of the rows the network was trained on; a measured configuration is
//! reported by Eq. 4, or, with [`Objective::Ios`], by the defaults' I/Os per operation over its own (repeatable
//! where times are noisy), which is then the fitness too.

use crate::collect::{measure_one, Config, Measurer};
use crate::ga::{search, GaSpec};
use crate::repo::{Outcome, RunRecord, Source};
use crate::represent::{apportion, by_workload, distances, weights, Metrics};
use crate::surrogate::{spearman, Surrogate, TrainSpec};
use crate::{Error, Result};
use cosine_ycsb::CoreWorkload;
use rand::rngs::StdRng;
use rand::seq::SliceRandom;
use rand::SeedableRng;
use serde::Serialize;
use std::collections::{BTreeMap, HashMap};

/// What a configuration is scored by.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Objective {
    /// RTune's: time, rate, write amplification and space amplification against the defaults.
    Rtune,
    /// Device I/Os per operation against the defaults' (engines that count them).
    Ios,
}

/// How the combined workload is made.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Matching {
    /// RTune's: every basic workload weighted by its distance.
    Combined,
    /// The nearest basic workload alone (RTune's "not combined" ablation).
    Nearest,
}

/// A tuning request.
#[derive(Clone, Debug)]
pub struct TuneSpec {
    /// The target workload (never one of the repository's).
    pub target: CoreWorkload,
    /// Engine memory, bytes (the repository's runs at this memory are used).
    pub memory: u64,
    /// Repository configurations the target is probed with.
    pub probes: usize,
    /// Candidates of the genetic search measured on the target.
    pub verify: usize,
    /// Seed of the request generators, the held-out split, the network and the search.
    pub seed: u64,
    /// Give the surrogate the analytical model's predicted I/Os as an input.
    pub model_feature: bool,
    /// Also measure the analytical model's pick on the target, and return it when nothing else tuning
    /// measured beats it (a tie goes to the model's pick; off: RTune's pipeline alone, the repository's probes
    /// and the search's candidates). It takes no part in matching, training or the search.
    pub model_probe: bool,
    /// Network training.
    pub train: TrainSpec,
    /// Genetic search.
    pub ga: GaSpec,
    /// The least rank correlation on held-out rows the surrogate must reach.
    pub min_rank_correlation: f64,
    /// What a configuration is scored by.
    pub objective: Objective,
    /// How the genetic search scores the surrogate's predictions (RTune's objective).
    pub fitness: Fitness,
    /// How the combined workload is made.
    pub matching: Matching,
}

/// One basic workload's match.
#[derive(Clone, Debug, Serialize)]
pub struct Match {
    /// The basic workload.
    pub workload: String,
    /// Its distance from the target.
    pub distance: f64,
    /// Its weight.
    pub weight: f64,
    /// Rows it gives the combined workload.
    pub rows: usize,
}

/// A measured candidate.
#[derive(Clone, Debug, Serialize)]
pub struct Candidate {
    /// Where it came from.
    pub source: Source,
    /// The configuration's id.
    pub config: String,
    /// The surrogate's fitness, for candidates of the search: Eq. 2 or Eq. 4 as the spec's [`Fitness`] under
    /// RTune's objective, the predicted I/O ratio under [`Objective::Ios`].
    pub predicted_fitness: Option<f64>,
    /// The surrogate's predicted ratios to the defaults (time, rate, WA, SA, I/Os), each within the range of
    /// the rows it was trained on, as the search saw them.
    pub predicted_ratios: Option<Vec<f64>>,
    /// The measured ratios: time, rate, WA, SA, I/Os.
    pub measured_ratios: Vec<f64>,
    /// The measured score under the objective (Eq. 4 for RTune's).
    pub measured_score: f64,
    /// The run.
    pub run: RunRecord,
}

/// What tuning did.
#[derive(Clone, Debug, Serialize)]
pub struct TuneReport {
    /// The target's run with the engine's defaults.
    pub defaults: RunRecord,
    /// The probes, measured.
    pub probes: Vec<Candidate>,
    /// The analytical model's pick, measured on the target (None: not asked for, or the engine has no model).
    pub model: Option<Candidate>,
    /// The metrics the representation used.
    pub metrics: usize,
    /// Every basic workload's distance, weight and rows, nearest first.
    pub matches: Vec<Match>,
    /// Distinct runs the surrogate was trained on (the combined workload repeats some).
    pub rows: usize,
    /// The surrogate's rank correlation between predicted and actual scores of configurations it was not
    /// trained on (5-fold cross-validation by configuration).
    pub rank_correlation: f64,
    /// The search's candidates, measured.
    pub candidates: Vec<Candidate>,
    /// Index into `candidates` of the best measured one.
    pub best: usize,
    /// What tuning returns: the best configuration it measured on the target, the search's candidates, the
    /// probes and the model's pick alike (a probe that beats every candidate is returned rather than thrown
    /// away).
    pub chosen: Candidate,
}

/// Outcome ratios to the defaults, each "higher is better": T_D/T, R/R_D, WA_D/WA, SA_D/SA, IO_D/IO. A value
/// of zero on either side is taken as a tiny one (a run that did nothing scores as badly as it can, not
/// neutrally), and each ratio is kept within [1/1000, 1000]; both sides zero, or an I/O count missing on either
/// side, compare equal (1).
pub fn ratios(o: &Outcome, d: &Outcome) -> [f64; 5] {
    const TINY: f64 = 1e-9;
    let div = |a: f64, b: f64| {
        if a <= 0.0 && b <= 0.0 {
            1.0
        } else {
            (a.max(TINY) / b.max(TINY)).clamp(1e-3, 1e3)
        }
    };
    [
        div(d.seconds, o.seconds),
        div(o.throughput, d.throughput),
        div(d.write_amplification, o.write_amplification),
        div(d.space_amplification, o.space_amplification),
        match (d.ios_per_op, o.ios_per_op) {
            (Some(a), Some(b)) => div(a.max(1e-3), b.max(1e-3)),
            _ => 1.0,
        },
    ]
}

/// Folds of the surrogate's cross-validation by configuration.
pub const FOLDS: usize = 5;

/// Distinct configurations the combined workload must hold for the surrogate to be checked.
pub const MIN_CHECKED_CONFIGS: usize = 10;

/// A measured score from ratios: RTune's Eq. 4 (geometric mean of the four), or the I/O ratio.
pub fn measured_score(r: &[f64; 5], objective: Objective) -> f64 {
    match objective {
        Objective::Rtune => eq4(r),
        Objective::Ios => r[4],
    }
}

/// How the genetic search scores a configuration from the surrogate's predicted ratios to the defaults under
/// RTune's objective (the I/O objective scores by the I/O ratio either way).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Fitness {
    /// RTune's Eq. 2 with equal weights: the mean of the four ratios. One ratio the network predicts far above
    /// the others (up to the largest its training rows hold) can carry the mean whatever the other three say.
    Mean,
    /// Eq. 4, the geometric mean of the four: what a measured configuration is scored by.
    Geometric,
}

/// The search's fitness from ratios: RTune's Eq. 2 with equal weights or Eq. 4 (`how`), or the I/O ratio.
pub fn fitness(r: &[f64], objective: Objective, how: Fitness) -> f64 {
    match (objective, how) {
        (Objective::Rtune, Fitness::Mean) => r[..4].iter().sum::<f64>() / 4.0,
        (Objective::Rtune, Fitness::Geometric) => eq4(r),
        (Objective::Ios, _) => r[4],
    }
}

/// RTune's Eq. 4: the geometric mean of the time, rate, WA and SA ratios.
fn eq4(r: &[f64]) -> f64 {
    (r[0] * r[1] * r[2] * r[3]).powf(0.25)
}

/// Predicted log-ratios as ratios, each first kept within its `range` (the least and greatest log-ratio of the
/// rows the network was trained on).
fn within(logr: &[f64], range: &[(f64, f64)]) -> Vec<f64> {
    logr.iter()
        .zip(range)
        .map(|(v, (lo, hi))| v.clamp(*lo, *hi).exp())
        .collect()
}

/// The fitness of predicted log-ratios, each first kept within its `range` ([`within`]).
fn within_fitness(logr: &[f64], range: &[(f64, f64)], objective: Objective, how: Fitness) -> f64 {
    fitness(&within(logr, range), objective, how)
}

fn default_of<'a>(runs: &[&'a RunRecord]) -> Option<&'a RunRecord> {
    runs.iter().copied().find(|r| r.source == Source::Default)
}

/// Tunes the target: see the module's steps. `progress` hears a line per step.
pub fn tune(
    m: &dyn Measurer,
    repo_runs: &[RunRecord],
    spec: &TuneSpec,
    progress: &mut dyn FnMut(&str),
) -> Result<TuneReport> {
    let space = m.space();
    let runs: Vec<RunRecord> = repo_runs
        .iter()
        .filter(|r| r.engine == m.engine() && r.memory == spec.memory)
        .cloned()
        .collect();
    let groups = by_workload(&runs);
    let same_mix = |w: &CoreWorkload| {
        let t = &spec.target;
        (
            w.read,
            w.update,
            w.insert,
            w.scan,
            w.read_modify_write,
            w.value_bytes(),
            w.distribution,
        ) == (
            t.read,
            t.update,
            t.insert,
            t.scan,
            t.read_modify_write,
            t.value_bytes(),
            t.distribution,
        )
    };
    if let Some(r) = runs
        .iter()
        .find(|r| r.workload == spec.target.name || same_mix(&r.workload_spec))
    {
        return Err(Error::Invalid(format!(
            "the target {} is in the repository (as {}): a target must be held out of it",
            spec.target.name, r.workload
        )));
    }
    // basic workloads with a defaults run (every score is against it)
    let basics: BTreeMap<&String, (&RunRecord, &Vec<&RunRecord>)> = groups
        .iter()
        .filter_map(|(w, rs)| default_of(rs).map(|d| (w, (d, rs))))
        .collect();
    if basics.len() < 2 {
        return Err(Error::Invalid(format!(
            "the repository holds {} workloads with a defaults run of {} at {} bytes of memory; tuning needs at least 2",
            basics.len(),
            m.engine(),
            spec.memory
        )));
    }
    // 1. probe: the configurations every basic workload ran, by their mean score there
    let mut by_config: HashMap<&str, Vec<f64>> = HashMap::new();
    for (d, rs) in basics.values() {
        for r in rs.iter() {
            let s = measured_score(&ratios(&r.outcome, &d.outcome), spec.objective);
            by_config.entry(r.config.as_str()).or_default().push(s);
        }
    }
    let mut shared: Vec<(&str, f64)> = by_config
        .iter()
        .filter(|(_, s)| s.len() == basics.len())
        .map(|(c, s)| (*c, s.iter().sum::<f64>() / s.len() as f64))
        .collect();
    shared.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(b.0)));
    let any_basic = basics
        .values()
        .next()
        .map(|(_, rs)| rs)
        .expect("two basics");
    let config_of = |id: &str| -> Option<Config> {
        let r = any_basic.iter().find(|r| r.config == id)?;
        let point = space.point(&r.knobs).ok()?;
        Some(Config {
            source: Source::Probe,
            point,
            knobs: r.knobs.clone(),
            settings: r.settings.clone(),
            id: r.config.clone(),
        })
    };
    let (dp, ds) = m.defaults(spec.memory);
    let default_config = Config::new(space, Source::Default, dp, ds, spec.memory);
    progress(&format!(
        "probing {} with the defaults and {} repository configurations",
        spec.target.name, spec.probes
    ));
    let defaults = measure_one(m, &spec.target, &default_config, spec.memory, spec.seed)?;
    let probe_configs: Vec<Config> = shared
        .iter()
        .filter(|(c, _)| *c != default_config.id)
        .filter_map(|(c, _)| config_of(c))
        .take(spec.probes)
        .collect();
    if probe_configs.is_empty() {
        return Err(Error::Invalid(
            "no repository configuration was run on every basic workload: nothing to probe with"
                .into(),
        ));
    }
    // a configuration measured on the target and scored against the defaults (probes, the model's pick and
    // the search's candidates alike)
    let measured = |c: &Config| -> Result<Candidate> {
        let r = measure_one(m, &spec.target, c, spec.memory, spec.seed)?;
        let rt = ratios(&r.outcome, &defaults.outcome);
        Ok(Candidate {
            source: c.source,
            config: c.id.clone(),
            predicted_fitness: None,
            predicted_ratios: None,
            measured_ratios: rt.to_vec(),
            measured_score: measured_score(&rt, spec.objective),
            run: r,
        })
    };
    let probes = probe_configs
        .iter()
        .map(measured)
        .collect::<Result<Vec<Candidate>>>()?;
    // the analytical model's pick for the target, measured like a probe (it is not a repository
    // configuration, so it takes no part in matching)
    let model = match spec
        .model_probe
        .then(|| m.model_pick(&spec.target, spec.memory))
    {
        Some(Some((u, s))) => {
            let c = Config::new(space, Source::Model, u, s, spec.memory);
            progress(&format!("measuring the analytical model's pick {}", c.id));
            Some(measured(&c)?)
        }
        _ => None,
    };
    // 2. represent and match over the same configurations
    let probe_ids: Vec<&str> = std::iter::once(default_config.id.as_str())
        .chain(probe_configs.iter().map(|c| c.id.as_str()))
        .collect();
    let target_runs: Vec<&RunRecord> = std::iter::once(&defaults)
        .chain(probes.iter().map(|p| &p.run))
        .collect();
    let basic_probe_runs: Vec<(&String, Vec<&RunRecord>)> = basics
        .iter()
        .map(|(w, (_, rs))| {
            (
                *w,
                rs.iter()
                    .copied()
                    .filter(|r| probe_ids.contains(&r.config.as_str()))
                    .collect(),
            )
        })
        .collect();
    let pool: Vec<&RunRecord> = target_runs
        .iter()
        .copied()
        .chain(
            basic_probe_runs
                .iter()
                .flat_map(|(_, rs)| rs.iter().copied()),
        )
        .collect();
    let metrics = Metrics::of(&pool);
    let target_rep = metrics.represent(&spec.target.name, &target_runs);
    let reps: Vec<_> = basic_probe_runs
        .iter()
        .map(|(w, rs)| metrics.represent(w, rs))
        .collect();
    let d = distances(&target_rep, &reps)?;
    let w = match spec.matching {
        Matching::Combined => weights(&d)?,
        Matching::Nearest => {
            let best = (0..d.len())
                .min_by(|&a, &b| d[a].total_cmp(&d[b]))
                .unwrap_or(0);
            (0..d.len())
                .map(|i| if i == best { 1.0 } else { 0.0 })
                .collect()
        }
    };
    // 3. the combined workload. RTune's has as many rows as one basic workload (20,000), round(w_i · n) of
    // workload i's best runs. A repository of tens of runs a workload would leave the network a handful of
    // rows, so ours has as many rows as the repository's basic workloads together, and a workload whose share
    // exceeds its runs gives them again, best first (a repeated row weighs its workload more). The held-out
    // rows are distinct runs, never a copy of a training row.
    let n: usize = basics.values().map(|(_, rs)| rs.len()).sum();
    let counts = apportion(&w, n);
    let mut matches: Vec<Match> = basics
        .keys()
        .enumerate()
        .map(|(i, name)| Match {
            workload: (*name).clone(),
            distance: d[i],
            weight: w[i],
            rows: counts[i],
        })
        .collect();
    matches.sort_by(|a, b| a.distance.total_cmp(&b.distance));
    // distinct rows (point, ratios, run) with how many times each enters the combined workload
    let mut rows: Vec<(Vec<f64>, [f64; 5], &RunRecord)> = Vec::new();
    let mut copies: Vec<usize> = Vec::new();
    for (i, (_, (dflt, rs))) in basics.iter().enumerate() {
        if counts[i] == 0 {
            continue;
        }
        // the model's picks are designs the knob space only approximates (a file size or filter granularity
        // it has no value for, a recorded class): their points would stand for configurations that never ran
        let mut scored: Vec<(f64, &RunRecord, [f64; 5], Vec<f64>)> = rs
            .iter()
            .filter(|r| r.source != Source::Model)
            .filter_map(|r| {
                let rt = ratios(&r.outcome, &dflt.outcome);
                let p = space.point(&r.knobs).ok()?;
                Some((measured_score(&rt, spec.objective), *r, rt, p))
            })
            .collect();
        if scored.is_empty() {
            continue;
        }
        scored.sort_by(|a, b| b.0.total_cmp(&a.0));
        let len = scored.len();
        let taken = counts[i].min(len);
        for (k, (_, r, rt, p)) in scored.into_iter().take(taken).enumerate() {
            rows.push((p, rt, r));
            copies.push(counts[i] / len + usize::from(k < counts[i] % len));
        }
    }
    if rows.len() < 10 {
        return Err(Error::Invalid(format!(
            "the combined workload has {} distinct runs; the surrogate needs at least 10 (collect more configurations)",
            rows.len()
        )));
    }
    // 4. learn: inputs the point (and the model's predicted I/Os on the target), outcomes the log-ratios
    let mut feature_memo: HashMap<Vec<u64>, f64> = HashMap::new();
    let mut model_feature = |p: &[f64]| -> f64 {
        let key: Vec<u64> = p.iter().map(|x| x.to_bits()).collect();
        *feature_memo.entry(key).or_insert_with(|| {
            m.settings(p, spec.memory)
                .ok()
                .and_then(|s| m.model_ios(&s, &spec.target))
                .map_or(0.0, |io| (1.0 + io.max(0.0)).ln())
        })
    };
    // the rows' feature comes from the same function as the search's (the settings their point makes)
    let mut x: Vec<Vec<f64>> = Vec::with_capacity(rows.len());
    for (p, _, _) in &rows {
        let mut v = p.clone();
        if spec.model_feature {
            v.push(model_feature(p));
        }
        x.push(v);
    }
    // the model feature scaled to [0, 1] over the rows (RTune's min-max scaling)
    let (flo, fhi) = if spec.model_feature {
        x.iter()
            .fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), v| {
                let f = *v.last().unwrap_or(&0.0);
                (a.min(f), b.max(f))
            })
    } else {
        (0.0, 1.0)
    };
    // clamped to the rows' range: the network has seen nothing beyond it, and the search would otherwise
    // exploit its extrapolation
    let scale = move |f: f64| {
        if fhi > flo {
            ((f - flo) / (fhi - flo)).clamp(0.0, 1.0)
        } else {
            0.5
        }
    };
    if spec.model_feature {
        for v in &mut x {
            if let Some(f) = v.last_mut() {
                *f = scale(*f);
            }
        }
    }
    let y: Vec<Vec<f64>> = rows
        .iter()
        .map(|(_, rt, _)| rt.iter().map(|v| v.ln()).collect())
        .collect();
    // The check: k-fold cross-validation by configuration. Every run of a held-out configuration (on any
    // workload) is out of its fold's training, so the check measures what the search needs: the network on
    // configurations it never saw. A configuration's actual score is the mean fitness of its runs in the
    // combined workload (weighted by their copies: what the network is trained to predict, having no
    // workload input), and the rank correlation is taken over configurations.
    let mut configs: Vec<&str> = rows.iter().map(|(_, _, r)| r.config.as_str()).collect();
    configs.sort_unstable();
    configs.dedup();
    if configs.len() < MIN_CHECKED_CONFIGS {
        return Err(Error::Invalid(format!(
            "the combined workload has {} distinct configurations; checking the surrogate needs at least {MIN_CHECKED_CONFIGS} (collect more configurations)",
            configs.len()
        )));
    }
    configs.shuffle(&mut StdRng::seed_from_u64(spec.seed));
    let fold_of: HashMap<&str, usize> = configs
        .iter()
        .enumerate()
        .map(|(i, c)| (*c, i % FOLDS))
        .collect();
    // a training set repeats each row as often as the combined workload holds it
    let expand = |idx: &[usize], v: &[Vec<f64>]| -> Vec<Vec<f64>> {
        idx.iter()
            .flat_map(|&i| std::iter::repeat_n(v[i].clone(), copies[i].max(1)))
            .collect()
    };
    // A prediction is kept within the outcomes the rows the network was trained on hold (per outcome, the
    // least and the greatest log-ratio): it knows nothing beyond them, and the search would otherwise chase
    // the direction it extrapolates furthest. Measured rows are scored as they are.
    let range_of = |idx: &[usize]| -> Vec<(f64, f64)> {
        let outputs = y.first().map_or(0, Vec::len);
        let mut r = vec![(f64::INFINITY, f64::NEG_INFINITY); outputs];
        for &i in idx {
            for (j, v) in y[i].iter().enumerate().take(outputs) {
                r[j] = (r[j].0.min(*v), r[j].1.max(*v));
            }
        }
        r
    };
    let score_within = |logr: &[f64], range: &[(f64, f64)]| {
        within_fitness(logr, range, spec.objective, spec.fitness)
    };
    let score_of = |logr: &[f64]| {
        let r: Vec<f64> = logr.iter().map(|v| v.exp()).collect();
        fitness(&r, spec.objective, spec.fitness)
    };
    progress(&format!(
        "checking the surrogate: {FOLDS}-fold cross-validation over {} configurations ({} distinct runs, {} rows with repeats)",
        configs.len(),
        rows.len(),
        copies.iter().map(|c| (*c).max(1)).sum::<usize>()
    ));
    let mut predicted = Vec::with_capacity(configs.len());
    let mut actual = Vec::with_capacity(configs.len());
    for fold in 0..FOLDS {
        let (test, train): (Vec<usize>, Vec<usize>) =
            (0..rows.len()).partition(|&i| fold_of[rows[i].2.config.as_str()] == fold);
        if test.is_empty() {
            continue;
        }
        let net = Surrogate::train(&expand(&train, &x), &expand(&train, &y), spec.train)?;
        let range = range_of(&train);
        for c in configs.iter().filter(|c| fold_of[**c] == fold) {
            let mine: Vec<usize> = test
                .iter()
                .copied()
                .filter(|&i| rows[i].2.config == *c)
                .collect();
            let weight: f64 = mine.iter().map(|&i| copies[i].max(1) as f64).sum();
            let mean = mine
                .iter()
                .map(|&i| copies[i].max(1) as f64 * score_of(&y[i]))
                .sum::<f64>()
                / weight.max(1.0);
            let p = net.predict(&[x[mine[0]].clone()])?;
            predicted.push(score_within(&p[0], &range));
            actual.push(mean);
        }
    }
    let rank_correlation = spearman(&predicted, &actual);
    progress(&format!(
        "surrogate rank correlation over {} held-out configurations: {rank_correlation:.2}",
        predicted.len()
    ));
    if rank_correlation.is_nan() || rank_correlation < spec.min_rank_correlation {
        return Err(Error::Invalid(format!(
            "the surrogate ranks configurations it did not see with a rank correlation of {rank_correlation:.2}, below {:.2}: its picks would be guesses (collect more configurations, or lower --min-rank-correlation knowingly)",
            spec.min_rank_correlation
        )));
    }
    let all: Vec<usize> = (0..rows.len()).collect();
    let net = Surrogate::train(&expand(&all, &x), &expand(&all, &y), spec.train)?;
    let range = range_of(&all);
    // 5. search
    progress(&format!(
        "genetic search: {} generations of {}",
        spec.ga.generations, spec.ga.population
    ));
    // the first generation starts from the combined workload's best runs (by their score), each point once
    let mut by_score: Vec<usize> = (0..rows.len()).collect();
    by_score.sort_by(|&a, &b| {
        measured_score(&rows[b].1, spec.objective)
            .total_cmp(&measured_score(&rows[a].1, spec.objective))
    });
    let mut initial: Vec<Vec<f64>> = Vec::new();
    for i in by_score {
        if !initial.contains(&rows[i].0) {
            initial.push(rows[i].0.clone());
        }
    }
    let canonical = |p: &[f64]| space.canonical(p);
    let use_feature = spec.model_feature;
    let mut fit = |batch: &[Vec<f64>]| -> Vec<f64> {
        let inputs: Vec<Vec<f64>> = batch
            .iter()
            .map(|p| {
                let mut v = p.clone();
                if use_feature {
                    v.push(scale(model_feature(p)));
                }
                v
            })
            .collect();
        match net.predict(&inputs) {
            Ok(out) => out.iter().map(|o| score_within(o, &range)).collect(),
            Err(_) => vec![f64::NEG_INFINITY; batch.len()],
        }
    };
    let best = search(space.dim(), &initial, spec.ga, &canonical, &mut fit);
    // 6. verify
    let mut candidates = Vec::new();
    for (p, f) in best.into_iter().take(spec.verify.max(1)) {
        let settings = m.settings(&p, spec.memory)?;
        let c = Config::new(space, Source::Tuned, p.clone(), settings, spec.memory);
        progress(&format!(
            "measuring candidate {} (predicted fitness {f:.3})",
            c.id
        ));
        let mut input = p.clone();
        if use_feature {
            input.push(scale(model_feature(&p)));
        }
        let predicted_ratios = net.predict(&[input])?.first().map(|o| within(o, &range));
        candidates.push(Candidate {
            predicted_fitness: Some(f),
            predicted_ratios,
            ..measured(&c)?
        });
    }
    let best = (0..candidates.len())
        .max_by(|&a, &b| {
            candidates[a]
                .measured_score
                .total_cmp(&candidates[b].measured_score)
        })
        .unwrap_or(0);
    // (the last of equal scores wins: the model's pick on a tie, as documented)
    let chosen = probes
        .iter()
        .chain(candidates.get(best))
        .chain(model.as_ref())
        .max_by(|a, b| a.measured_score.total_cmp(&b.measured_score))
        .cloned()
        .ok_or_else(|| Error::Invalid("tuning measured nothing".into()))?;
    Ok(TuneReport {
        defaults,
        probes,
        model,
        metrics: metrics.names.len(),
        matches,
        rows: rows.len(),
        rank_correlation,
        candidates,
        best,
        chosen,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn o(seconds: f64, rate: f64, wa: f64, sa: f64, io: Option<f64>) -> Outcome {
        Outcome {
            seconds,
            throughput: rate,
            write_amplification: wa,
            space_amplification: sa,
            ios_per_op: io,
            ..Outcome::default()
        }
    }

    #[test]
    fn ratios_and_scores_follow_rtune() {
        let d = o(2.0, 100.0, 4.0, 1.2, Some(3.0));
        let c = o(1.0, 200.0, 2.0, 1.2, Some(1.5));
        let r = ratios(&c, &d);
        assert_eq!(r, [2.0, 2.0, 2.0, 1.0, 2.0]);
        // Eq. 4: the geometric mean of the four; Eq. 2: their mean; the I/O objective: the I/O ratio
        assert!((measured_score(&r, Objective::Rtune) - 8f64.powf(0.25)).abs() < 1e-12);
        assert!((fitness(&r, Objective::Rtune, Fitness::Mean) - 1.75).abs() < 1e-12);
        assert_eq!(
            fitness(&r, Objective::Rtune, Fitness::Geometric),
            measured_score(&r, Objective::Rtune)
        );
        assert_eq!(fitness(&r, Objective::Ios, Fitness::Mean), 2.0);
        // a prediction beyond the training rows counts as the furthest they reach: a write-amplification ratio
        // extrapolated to e^5 is scored as the rows' e^1
        let range = [(-1.0, 1.0); 5];
        let wild = [0.0, 0.0, 5.0, 0.0, 0.0];
        let kept = [0.0, 0.0, 1.0, 0.0, 0.0];
        for how in [Fitness::Mean, Fitness::Geometric] {
            let f = within_fitness(&wild, &range, Objective::Rtune, how);
            assert_eq!(f, within_fitness(&kept, &range, Objective::Rtune, how));
            assert!(f < fitness(&wild.map(f64::exp), Objective::Rtune, how));
        }
        assert!(
            (within_fitness(&kept, &range, Objective::Rtune, Fitness::Geometric) - 0.25f64.exp())
                .abs()
                < 1e-12
        );
        assert_eq!(measured_score(&r, Objective::Ios), 2.0);
        // the defaults against themselves score 1
        assert_eq!(measured_score(&ratios(&d, &d), Objective::Rtune), 1.0);
        // a run that did nothing is the worst, not neutral; both zero is neutral; a missing count is neutral
        let dead = o(2.0, 0.0, 4.0, 1.2, None);
        let r = ratios(&dead, &d);
        assert_eq!(r[1], 1e-3);
        assert_eq!(r[4], 1.0);
        assert_eq!(
            ratios(&o(1.0, 1.0, 0.0, 0.0, None), &o(1.0, 1.0, 0.0, 0.0, None))[2],
            1.0
        );
    }
}

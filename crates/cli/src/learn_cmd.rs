//! `cosine learn`: tuning from measured runs (RTune). `collect` measures configurations into a repository;
//! `tune` probes a target workload, matches it to the repository's, learns a surrogate, searches it, and
//! measures the best candidates.

use anyhow::{bail, Context, Result};
use clap::{Parser, Subcommand, ValueEnum};
use cosine_learn::collect::{collect, CollectPlan, CosineMeasurer, Measurer};
use cosine_learn::repo::Repository;
use cosine_learn::workloads;
use std::time::{Duration, Instant};

/// The `learn` subcommands.
#[derive(Subcommand, Debug)]
pub enum LearnCommand {
    /// Measures configurations (the defaults, the model's pick, Latin-hypercube samples) on workloads and appends
    /// each run to a repository (one JSON line a run; a stopped collection resumes where it stopped).
    Collect(CollectArgs),
    /// Tunes a target workload from a repository: probe, match (the distance table), combine, train the
    /// surrogate, genetic search, then measure the best candidates and write the best measured configuration.
    Tune(TuneArgs),
    /// The held-out evaluation: on targets outside the repository, the defaults, the model's pick, `tune`
    /// (RTune), `tune` with the model's predicted I/Os as an input, nearest-workload matching and equal-budget
    /// random search, measured side by side.
    Evaluate(EvaluateArgs),
}

/// `cosine learn evaluate`.
#[derive(Parser, Debug)]
pub struct EvaluateArgs {
    /// The engine tuned.
    #[arg(long, value_enum, default_value_t = EngineArg::Cosine)]
    engine: EngineArg,
    /// The repository directory.
    #[arg(long)]
    repo: String,
    /// Targets, comma-separated (`targets`: YCSB A, B, F, rw70-2k and rw30-8k).
    #[arg(long, default_value = "targets")]
    targets: String,
    /// Seeds, comma-separated: each target is tuned once per seed.
    #[arg(long, default_value = "1,2,3")]
    seeds: String,
    /// Rounds the picks are measured side by side in (their median outcome is scored).
    #[arg(long, default_value_t = 3)]
    repeats: usize,
    /// Repository configurations each tuning probes the target with.
    #[arg(long, default_value_t = 10)]
    probe: usize,
    /// Candidates each tuning measures.
    #[arg(long, default_value_t = 3)]
    verify: usize,
    /// What the tunings and the random search score by.
    #[arg(long, value_enum, default_value_t = ObjectiveArg::Rtune)]
    objective: ObjectiveArg,
    /// How each tuning's genetic search scores the surrogate's predictions.
    #[arg(long, value_enum, default_value_t = FitnessArg::Geometric)]
    fitness: FitnessArg,
    /// Training passes of each surrogate.
    #[arg(long, default_value_t = 300)]
    epochs: usize,
    /// Generations of each genetic search.
    #[arg(long, default_value_t = 1000)]
    generations: usize,
    /// The least rank correlation each tuning's surrogate must reach on held-out rows.
    #[arg(long, default_value_t = 0.5)]
    min_rank_correlation: f64,
    /// Client threads of each run.
    #[arg(long, default_value_t = 1)]
    threads: usize,
    /// Print one JSON document (every target, seed and pick) instead of the table.
    #[arg(long)]
    json: bool,
    /// Also write that JSON document to this file.
    #[arg(long)]
    json_out: Option<String>,
    /// Print the table of a saved JSON document (`--json-out`) instead of running anything.
    #[arg(long, value_name = "FILE")]
    table_from: Option<String>,
    /// Where runs keep their data while they run (default: the system's temporary directory).
    #[arg(long)]
    work: Option<String>,
}

/// What `cosine learn tune` scores configurations by.
#[derive(Clone, Copy, Debug, ValueEnum, PartialEq, Eq)]
pub enum ObjectiveArg {
    /// RTune's: time, rate, write and space amplification against the defaults.
    Rtune,
    /// Device I/Os per operation against the defaults' (repeatable where times are noisy).
    Ios,
}

/// How the genetic search scores the surrogate's predicted ratios to the defaults.
#[derive(Clone, Copy, Debug, ValueEnum, PartialEq, Eq)]
pub enum FitnessArg {
    /// RTune's Eq. 2: the mean of the time, rate, write- and space-amplification ratios.
    Mean,
    /// Eq. 4: their geometric mean, what measured configurations are scored by.
    Geometric,
}

impl FitnessArg {
    fn get(self) -> cosine_learn::tune::Fitness {
        match self {
            FitnessArg::Mean => cosine_learn::tune::Fitness::Mean,
            FitnessArg::Geometric => cosine_learn::tune::Fitness::Geometric,
        }
    }
}

/// How the target is matched to the repository's workloads.
#[derive(Clone, Copy, Debug, ValueEnum, PartialEq, Eq)]
pub enum MatchingArg {
    /// RTune's combined workload: every basic workload weighted by its distance.
    Combined,
    /// The nearest basic workload alone.
    Nearest,
}

/// `cosine learn tune`.
#[derive(Parser, Debug)]
pub struct TuneArgs {
    /// The repository directory (see `cosine learn collect`).
    #[arg(long)]
    repo: String,
    /// The target: a workload name (ycsb-a, rw70-2k, ...) or a YCSB property file. It must not be one of the
    /// repository's workloads.
    #[arg(long)]
    target: String,
    /// The engine tuned.
    #[arg(long, value_enum, default_value_t = EngineArg::Cosine)]
    engine: EngineArg,
    /// Records of the target (default: the repository's scale, records of 1 KiB).
    #[arg(long)]
    records: Option<u64>,
    /// Operations of each run on the target (default: the repository's).
    #[arg(long)]
    ops: Option<u64>,
    /// Engine memory, bytes (default: the repository's, when it holds one size).
    #[arg(long)]
    memory: Option<u64>,
    /// Repository configurations the target is probed with.
    #[arg(long, default_value_t = 10)]
    probe: usize,
    /// Candidates of the genetic search measured on the target.
    #[arg(long, default_value_t = 3)]
    verify: usize,
    /// What configurations are scored by.
    #[arg(long, value_enum, default_value_t = ObjectiveArg::Rtune)]
    objective: ObjectiveArg,
    /// How the genetic search scores the surrogate's predictions.
    #[arg(long, value_enum, default_value_t = FitnessArg::Geometric)]
    fitness: FitnessArg,
    /// How the target is matched.
    #[arg(long, value_enum, default_value_t = MatchingArg::Combined)]
    matching: MatchingArg,
    /// Give the surrogate the analytical model's predicted I/Os on the target as one more input (off: RTune
    /// as published). Off by default: in `cosine learn evaluate` the genetic search exploited the network
    /// along that input and picked worse configurations than without it (BENCHMARKS.md).
    #[arg(long)]
    model_feature: bool,
    /// Do not measure the analytical model's pick on the target (RTune's pipeline alone: only the
    /// repository's probes and the search's candidates can be returned).
    #[arg(long)]
    no_model_probe: bool,
    /// Training passes over the combined workload.
    #[arg(long, default_value_t = 300)]
    epochs: usize,
    /// AdamW's learning rate.
    #[arg(long, default_value_t = 1e-3)]
    learning_rate: f64,
    /// Generations of the genetic search.
    #[arg(long, default_value_t = 1000)]
    generations: usize,
    /// The least rank correlation the surrogate must reach on held-out rows.
    #[arg(long, default_value_t = 0.5)]
    min_rank_correlation: f64,
    /// Seed of the runs, the split, the network and the search.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Client threads of each run.
    #[arg(long, default_value_t = 1)]
    threads: usize,
    /// Where to write the best measured configuration (our engine: design.json).
    #[arg(long)]
    out: String,
    /// Also write the whole report (probes, matches, candidates with their runs) as JSON here.
    #[arg(long)]
    report: Option<String>,
    /// Where runs keep their data while they run (default: the system's temporary directory).
    #[arg(long)]
    work: Option<String>,
}

/// The engine a repository measures.
#[derive(Clone, Copy, Debug, ValueEnum, PartialEq, Eq)]
pub enum EngineArg {
    /// Cosine's engine: the design primitives and algorithmic choices are the knobs.
    Cosine,
    /// RocksDB 7.8 (Debian's librocksdb-dev) with RTune's knobs, in a `cosine` built with `--features rocksdb`.
    Rocksdb,
}

impl EngineArg {
    fn name(self) -> &'static str {
        match self {
            EngineArg::Cosine => "cosine",
            EngineArg::Rocksdb => "rocksdb",
        }
    }
}

/// The measurer of an engine, its runs' data under `work`.
fn measurer(engine: EngineArg, work: Option<String>, threads: usize) -> Result<Box<dyn Measurer>> {
    let work = work
        .map(std::path::PathBuf::from)
        .unwrap_or_else(std::env::temp_dir);
    std::fs::create_dir_all(&work).with_context(|| format!("--work {}", work.display()))?;
    match engine {
        EngineArg::Cosine => Ok(Box::new(CosineMeasurer::new(work, threads))),
        #[cfg(feature = "rocksdb")]
        EngineArg::Rocksdb => Ok(Box::new(cosine_peers::learn::RocksMeasurer::new(
            work, threads,
        ))),
        #[cfg(not(feature = "rocksdb"))]
        EngineArg::Rocksdb => bail!(
            "this cosine is built without RocksDB: build it with --features rocksdb (Debian's librocksdb-dev, ROCKSDB_LIB_DIR=/usr/lib/x86_64-linux-gnu)"
        ),
    }
}

/// `cosine learn collect`.
#[derive(Parser, Debug)]
pub struct CollectArgs {
    /// The engine measured.
    #[arg(long, value_enum, default_value_t = EngineArg::Cosine)]
    engine: EngineArg,
    /// Workloads, comma-separated: `basic` (the 16 basic workloads: reads 90/50/10% and update-random at
    /// 256 B-16 KiB values), or names (`rw90-1k`, `upd-4k`, ..., a YCSB core workload such as `ycsb-a`).
    #[arg(long, default_value = "basic")]
    workloads: String,
    /// Configurations per workload: the defaults, the model's pick, and Latin-hypercube samples for the rest.
    #[arg(long, default_value_t = 20)]
    configs: usize,
    /// Records at 1 KiB values (a workload with larger values loads fewer, keeping the data's bytes).
    #[arg(long, default_value_t = 20_000)]
    records: u64,
    /// Operations of each timed run.
    #[arg(long, default_value_t = 10_000)]
    ops: u64,
    /// Engine memory (buffer, filters, entry cache and fences), bytes.
    #[arg(long, default_value_t = 4 << 20)]
    memory: u64,
    /// The repository directory (created if missing; runs are appended to its runs.jsonl).
    #[arg(long)]
    repo: String,
    /// Seed of the samples and of the request generators.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Client threads of each run.
    #[arg(long, default_value_t = 1)]
    threads: usize,
    /// Stop starting runs after this many minutes (a later call resumes).
    #[arg(long)]
    time_budget: Option<f64>,
    /// Where runs keep their data while they run (default: the system's temporary directory).
    #[arg(long)]
    work: Option<String>,
}

/// Runs `cosine learn ...`.
pub fn run(c: LearnCommand) -> Result<()> {
    match c {
        LearnCommand::Collect(a) => collect_cmd(a),
        LearnCommand::Tune(a) => tune_cmd(a),
        LearnCommand::Evaluate(a) => evaluate_cmd(a),
    }
}

/// The workloads a `--workloads` list names, at `records` (1 KiB-equivalent) and `ops`.
pub fn parse_workloads(
    list: &str,
    records: u64,
    ops: u64,
) -> Result<Vec<cosine_ycsb::CoreWorkload>> {
    let mut out = Vec::new();
    for name in list.split(',').map(str::trim).filter(|s| !s.is_empty()) {
        if name == "basic" {
            out.extend(workloads::basic(records, ops));
        } else if name == "targets" {
            out.extend(workloads::targets(records, ops));
        } else {
            match workloads::by_name(name, records, ops) {
                Some(w) => out.push(w),
                None => bail!(
                    "unknown workload '{name}' (basic, targets, rwNN-SIZE such as rw90-1k, upd-SIZE, or ycsb-a..ycsb-f)"
                ),
            }
        }
    }
    if out.is_empty() {
        bail!("--workloads names no workload");
    }
    Ok(out)
}

fn collect_cmd(a: CollectArgs) -> Result<()> {
    for (name, v) in [
        ("--configs", a.configs as u64),
        ("--records", a.records),
        ("--ops", a.ops),
        ("--threads", a.threads as u64),
    ] {
        if v == 0 {
            bail!("{name} must be at least 1");
        }
    }
    if a.memory < 64 << 10 {
        bail!("--memory must be at least 65536 bytes");
    }
    if let Some(m) = a.time_budget {
        if !(m > 0.0 && m.is_finite()) {
            bail!("--time-budget must be a positive number of minutes");
        }
    }
    let workloads = parse_workloads(&a.workloads, a.records, a.ops)?;
    let m = measurer(a.engine, a.work, a.threads)?;
    let m = m.as_ref();
    let repo = Repository::at(&a.repo);
    let plan = CollectPlan {
        workloads,
        configs: a.configs,
        memory: a.memory,
        seed: a.seed,
        deadline: a
            .time_budget
            .map(|min| Instant::now() + Duration::from_secs_f64(min * 60.0)),
    };
    let started = Instant::now();
    println!(
        "cosine learn collect: {} on {} workloads x {} configurations, {} B of memory, into {}",
        m.engine(),
        plan.workloads.len(),
        plan.configs,
        plan.memory,
        repo.file().display()
    );
    let report = collect(m, &repo, &plan, &mut |r, at, total| {
        let ios = r
            .outcome
            .ios_per_op
            .map_or(String::new(), |x| format!(", {x:.2} I/Os an op"));
        println!(
            "[{at}/{total}] {} {} {}: {:.0} ops/s{ios}, p99 {:.0} us, WA {:.2}, SA {:.2}",
            r.workload,
            serde_json::to_value(r.source)
                .ok()
                .and_then(|v| v.as_str().map(str::to_string))
                .unwrap_or_default(),
            r.config,
            r.outcome.throughput,
            r.outcome.p99_us,
            r.outcome.write_amplification,
            r.outcome.space_amplification
        );
    })?;
    println!(
        "{} runs measured, {} already in the repository{}, {:.0} s",
        report.measured,
        report.skipped,
        if report.out_of_time {
            "; the time budget ran out (run the same command again to resume)"
        } else {
            ""
        },
        started.elapsed().as_secs_f64()
    );
    Ok(())
}

fn tune_cmd(a: TuneArgs) -> Result<()> {
    use cosine_learn::tune::{tune, Matching, Objective, TuneSpec};
    for (name, v) in [
        ("--verify", a.verify),
        ("--threads", a.threads),
        ("--epochs", a.epochs),
    ] {
        if v == 0 {
            bail!("{name} must be at least 1");
        }
    }
    if !(a.learning_rate > 0.0 && a.learning_rate.is_finite()) {
        bail!("--learning-rate must be a positive number");
    }
    if !(-1.0..=1.0).contains(&a.min_rank_correlation) {
        bail!("--min-rank-correlation must be in [-1, 1]");
    }
    let repo = Repository::at(&a.repo);
    let runs = repo.load()?;
    let engine = a.engine.name();
    let scale = RepositoryScale::of(&runs, engine, a.memory)
        .with_context(|| repo.file().display().to_string())?;
    let (memory, runs_used) = (scale.memory, scale.runs);
    let records = a.records.unwrap_or(scale.records);
    let ops = a.ops.unwrap_or(scale.ops);
    if records == 0 || ops == 0 {
        bail!("--records and --ops must be positive");
    }
    let target = if std::path::Path::new(&a.target).is_file() {
        let w = crate::bench_cmd::load_workload(&a.target, Some(&a.target), records, ops)?;
        let mut w = w;
        w.name = std::path::Path::new(&a.target)
            .file_stem()
            .map_or(a.target.clone(), |s| s.to_string_lossy().into_owned());
        w
    } else {
        workloads::by_name(&a.target, records, ops).ok_or_else(|| {
            anyhow::anyhow!(
                "unknown target '{}' (a workload name such as ycsb-a or rw70-2k, or a YCSB property file)",
                a.target
            )
        })?
    };
    let m = measurer(a.engine, a.work, a.threads)?;
    let m = m.as_ref();
    let spec = TuneSpec {
        target,
        memory,
        probes: a.probe,
        verify: a.verify,
        seed: a.seed,
        model_feature: a.model_feature,
        model_probe: !a.no_model_probe,
        train: cosine_learn::surrogate::TrainSpec {
            epochs: a.epochs,
            learning_rate: a.learning_rate,
            seed: a.seed,
            ..Default::default()
        },
        ga: cosine_learn::ga::GaSpec {
            generations: a.generations,
            seed: a.seed,
            ..Default::default()
        },
        min_rank_correlation: a.min_rank_correlation,
        objective: match a.objective {
            ObjectiveArg::Rtune => Objective::Rtune,
            ObjectiveArg::Ios => Objective::Ios,
        },
        fitness: a.fitness.get(),
        matching: match a.matching {
            MatchingArg::Combined => Matching::Combined,
            MatchingArg::Nearest => Matching::Nearest,
        },
    };
    println!(
        "cosine learn tune: {} ({} records, {} operations) from {} runs in {}, {} B of memory",
        spec.target.name,
        spec.target.record_count,
        spec.target.operation_count,
        runs_used,
        repo.file().display(),
        memory
    );
    let r = tune(m, &runs, &spec, &mut |line| println!("  {line}"))?;
    let d = &r.defaults.outcome;
    println!(
        "defaults on the target: {:.0} ops/s, {:.2} s, WA {:.2}, SA {:.2}, {:.2} I/Os an op",
        d.throughput,
        d.seconds,
        d.write_amplification,
        d.space_amplification,
        d.ios_per_op.unwrap_or(f64::NAN)
    );
    println!(
        "workload matching over {} metrics (nearest first):",
        r.metrics
    );
    println!(
        "  {:<11} {:>10} {:>8} {:>6}",
        "workload", "distance", "weight", "rows"
    );
    for mt in &r.matches {
        println!(
            "  {:<11} {:>10.2} {:>8.3} {:>6}",
            mt.workload, mt.distance, mt.weight, mt.rows
        );
    }
    println!(
        "surrogate: {} distinct runs, rank correlation {:.2} over configurations it was not trained on (5-fold)",
        r.rows, r.rank_correlation
    );
    let fmt = |v: &[f64]| {
        v.iter()
            .map(|x| format!("{x:.2}"))
            .collect::<Vec<_>>()
            .join(" ")
    };
    println!("ratios to the defaults (higher is better): time rate WA SA I/Os");
    let best_probe = r
        .probes
        .iter()
        .max_by(|a, b| a.measured_score.total_cmp(&b.measured_score));
    if let Some(p) = best_probe {
        println!(
            "  best probe     {}  measured {}  score {:.3}",
            p.config,
            fmt(&p.measured_ratios),
            p.measured_score
        );
    }
    if let Some(p) = &r.model {
        println!(
            "  model's pick   {}  measured {}  score {:.3}",
            p.config,
            fmt(&p.measured_ratios),
            p.measured_score
        );
    }
    for (i, c) in r.candidates.iter().enumerate() {
        println!(
            "  candidate {}    {}  predicted {}  measured {}  score {:.3}{}",
            i + 1,
            c.config,
            c.predicted_ratios.as_deref().map_or("-".into(), fmt),
            fmt(&c.measured_ratios),
            c.measured_score,
            match (
                i == r.best,
                r.chosen.source == cosine_learn::repo::Source::Tuned
            ) {
                (true, true) => "  <- best, chosen",
                (true, false) => "  <- best candidate",
                _ => "",
            }
        );
    }
    let chosen = &r.chosen;
    std::fs::write(
        &a.out,
        serde_json::to_string_pretty(&chosen.run.settings)? + "\n",
    )
    .with_context(|| format!("--out {}", a.out))?;
    println!(
        "wrote {} (score {:.3} against the defaults: {})",
        a.out,
        chosen.measured_score,
        match chosen.source {
            cosine_learn::repo::Source::Probe => format!(
                "the best probe, {}; nothing else measured beat it",
                chosen.config
            ),
            cosine_learn::repo::Source::Model => format!(
                "the analytical model's pick, {}; nothing else measured beat it",
                chosen.config
            ),
            _ => format!("candidate {}", r.best + 1),
        }
    );
    if let Some(path) = &a.report {
        std::fs::write(path, serde_json::to_string_pretty(&r)? + "\n")
            .with_context(|| format!("--report {path}"))?;
    }
    Ok(())
}

/// A repository's runs of an engine at one memory size, and their scale.
struct RepositoryScale {
    /// Engine memory, bytes.
    memory: u64,
    /// Records of 1 KiB, or as many bytes (the most common over the runs).
    records: u64,
    /// Operations of a run (the most common).
    ops: u64,
    /// Runs at that memory.
    runs: usize,
}

impl RepositoryScale {
    /// The scale of `engine`'s runs at `memory` (None: the repository must hold one memory size).
    fn of(
        runs: &[cosine_learn::repo::RunRecord],
        engine: &str,
        memory: Option<u64>,
    ) -> Result<Self> {
        let mine: Vec<_> = runs.iter().filter(|r| r.engine == engine).collect();
        if mine.is_empty() {
            bail!(
                "the repository holds no runs of {engine} (collect some with cosine learn collect --engine {engine})"
            );
        }
        let memory = match memory {
            Some(m) => m,
            None => {
                let sizes: std::collections::BTreeSet<u64> =
                    mine.iter().map(|r| r.memory).collect();
                if sizes.len() != 1 {
                    bail!("the repository holds runs at several memory sizes ({sizes:?}): choose one with --memory");
                }
                *sizes.iter().next().expect("one size")
            }
        };
        let mine: Vec<_> = mine.into_iter().filter(|r| r.memory == memory).collect();
        if mine.is_empty() {
            bail!("the repository holds no runs of {engine} at {memory} bytes of memory");
        }
        let mode = |v: Vec<u64>| -> u64 {
            let mut counts = std::collections::BTreeMap::new();
            for x in v {
                *counts.entry(x).or_insert(0) += 1;
            }
            counts
                .into_iter()
                .max_by_key(|(_, c)| *c)
                .map_or(0, |(x, _)| x)
        };
        Ok(RepositoryScale {
            memory,
            records: mode(
                mine.iter()
                    .map(|r| {
                        r.workload_spec.record_count * r.workload_spec.value_bytes() as u64 / 1024
                    })
                    .collect(),
            ),
            ops: mode(
                mine.iter()
                    .map(|r| r.workload_spec.operation_count)
                    .collect(),
            ),
            runs: mine.len(),
        })
    }
}

fn evaluate_cmd(a: EvaluateArgs) -> Result<()> {
    use cosine_learn::evaluate::{check, evaluate_target, TargetRun};
    use cosine_learn::tune::{Matching, Objective, TuneSpec};
    check(a.repeats)?;
    if let Some(path) = &a.table_from {
        let text = std::fs::read_to_string(path).with_context(|| format!("--table-from {path}"))?;
        let doc: serde_json::Value =
            serde_json::from_str(&text).with_context(|| format!("--table-from {path}"))?;
        let all: Vec<TargetRun> = serde_json::from_value(doc["results"].clone())
            .with_context(|| format!("--table-from {path}: no results"))?;
        let mut targets: Vec<String> = Vec::new();
        for r in &all {
            if !targets.contains(&r.target) {
                targets.push(r.target.clone());
            }
        }
        let repeats = doc["repeats"].as_u64().unwrap_or(a.repeats as u64) as usize;
        print_table(&all, &targets, repeats);
        return Ok(());
    }
    for (name, v) in [
        ("--verify", a.verify),
        ("--threads", a.threads),
        ("--epochs", a.epochs),
    ] {
        if v == 0 {
            bail!("{name} must be at least 1");
        }
    }
    if !(-1.0..=1.0).contains(&a.min_rank_correlation) {
        bail!("--min-rank-correlation must be in [-1, 1]");
    }
    let seeds: Vec<u64> = a
        .seeds
        .split(',')
        .map(|s| s.trim().parse::<u64>())
        .collect::<std::result::Result<_, _>>()
        .map_err(|_| anyhow::anyhow!("--seeds must be whole numbers separated by commas"))?;
    let repo = Repository::at(&a.repo);
    let runs = repo.load()?;
    let scale = RepositoryScale::of(&runs, a.engine.name(), None)
        .with_context(|| repo.file().display().to_string())?;
    let (memory, records, ops) = (scale.memory, scale.records, scale.ops);
    let targets = parse_workloads(&a.targets, records, ops)?;
    let m = measurer(a.engine, a.work, a.threads)?;
    let m = m.as_ref();
    let started = Instant::now();
    let mut all = Vec::new();
    for t in &targets {
        for &seed in &seeds {
            let template = TuneSpec {
                target: t.clone(),
                memory,
                probes: a.probe,
                verify: a.verify,
                seed,
                model_feature: false,
                model_probe: true,
                train: cosine_learn::surrogate::TrainSpec {
                    epochs: a.epochs,
                    learning_rate: 1e-3,
                    seed,
                    ..Default::default()
                },
                ga: cosine_learn::ga::GaSpec {
                    generations: a.generations,
                    seed,
                    ..Default::default()
                },
                min_rank_correlation: a.min_rank_correlation,
                objective: match a.objective {
                    ObjectiveArg::Rtune => Objective::Rtune,
                    ObjectiveArg::Ios => Objective::Ios,
                },
                fitness: a.fitness.get(),
                matching: Matching::Combined,
            };
            let r = evaluate_target(m, &runs, &template, a.repeats, &mut |line| {
                if !a.json {
                    eprintln!("  {line}");
                }
            })?;
            all.push(r);
        }
    }
    let doc = serde_json::to_string_pretty(&serde_json::json!({
        "repository": repo.file(), "fitness": a.fitness.get(), "memory": memory, "records": records, "operations": ops,
        "repeats": a.repeats, "seeds": seeds, "results": all,
    }))?;
    if let Some(path) = &a.json_out {
        std::fs::write(path, doc.clone() + "\n").with_context(|| format!("--json-out {path}"))?;
    }
    if a.json {
        println!("{doc}");
        return Ok(());
    }
    print_table(
        &all,
        &targets.iter().map(|t| t.name.clone()).collect::<Vec<_>>(),
        a.repeats,
    );
    println!("{:.0} s", started.elapsed().as_secs_f64());
    Ok(())
}

/// The evaluation's table: per target, each method's RTune score and I/O ratio, median over seeds (min-max),
/// then every failure.
fn print_table(all: &[cosine_learn::evaluate::TargetRun], targets: &[String], repeats: usize) {
    use cosine_learn::evaluate::METHODS;
    println!(
        "RTune's score (Eq. 4: geometric mean of the time, rate, WA and SA ratios to the defaults; median of {} side-by-side rounds), per target: median over seeds (min-max); I/O ratio below",
        repeats
    );
    print!("{:<10}", "target");
    for m in METHODS.iter().skip(1) {
        print!(" {m:>17}");
    }
    println!();
    let cell = |v: &mut Vec<f64>| -> String {
        match cosine_learn::evaluate::spread(v) {
            None if v.is_empty() => "not run".into(),
            None => "failed".into(),
            Some((med, _, _)) if v.iter().filter(|x| x.is_finite()).count() == 1 => {
                format!("{med:.2} (1 seed)")
            }
            Some((med, lo, hi)) => format!("{med:.2} ({lo:.2}-{hi:.2})"),
        }
    };
    for t in targets {
        for (label, field) in [("score", 0), ("I/O", 1)] {
            let name = if field == 0 {
                t.clone()
            } else {
                format!("  {label}")
            };
            print!("{name:<10}");
            for method in METHODS.iter().skip(1) {
                let mut v: Vec<f64> = all
                    .iter()
                    .filter(|r| r.target == *t)
                    .flat_map(|r| r.picks.iter().filter(|p| p.method == *method))
                    .map(|p| if field == 0 { p.score } else { p.io_ratio })
                    .collect();
                print!(" {:>17}", cell(&mut v));
            }
            println!();
        }
    }
    // what `tune` returned, told from the configurations' ids: the model's pick (then its column and the
    // model's are one configuration measured twice, and differ by noise alone), its best probe, or a candidate
    // of the search
    println!(
        "what tune returned (seeds): the model's pick / its best probe / a candidate of the search"
    );
    for t in targets {
        let (mut model, mut probe, mut candidate) = (0, 0, 0);
        for r in all.iter().filter(|r| r.target == *t) {
            let id = |m: &str| {
                r.picks
                    .iter()
                    .find(|p| p.method == m && p.failed.is_none())
                    .map(|p| p.config.as_str())
            };
            match id("tune") {
                None => {}
                Some(c) if Some(c) == id("model") => model += 1,
                Some(c) if Some(c) == id("best-probe") => probe += 1,
                Some(_) => candidate += 1,
            }
        }
        println!("  {t:<10} {model} / {probe} / {candidate}");
    }
    for r in all {
        for p in &r.picks {
            if let Some(f) = &p.failed {
                println!("{} seed {}: {} failed: {f}", r.target, r.seed, p.method);
            }
        }
    }
}

//! `cosine learn tune`: tunes a target workload from a repository (probe, match, combine, train the surrogate,
//! genetic search, measure the best candidates) and writes the best measured configuration.

use super::common::{measurer, EngineArg, FitnessArg, MatchingArg, ObjectiveArg, RepositoryScale};
use crate::ycsb_args::load_workload;
use anyhow::{bail, Context, Result};
use clap::Parser;
use cosine_learn::repo::Repository;
use cosine_learn::tune::{tune, Matching, TuneReport, TuneSpec};
use cosine_learn::workloads;
use cosine_ycsb::CoreWorkload;

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

/// Runs `cosine learn tune`.
pub(super) fn tune_cmd(a: TuneArgs) -> Result<()> {
    check(&a)?;
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
    let target = target_workload(&a, records, ops)?;
    let m = measurer(a.engine, a.work.clone(), a.threads)?;
    let m = m.as_ref();
    let spec = tune_spec(&a, target, memory);
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
    print_matching(&r);
    print_ratios(&r);
    write_chosen(&a, &r)
}

/// The flags' own limits.
fn check(a: &TuneArgs) -> Result<()> {
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
    Ok(())
}

/// The target: a YCSB property file (named after the file) or a workload name, at `records` and `ops`.
fn target_workload(a: &TuneArgs, records: u64, ops: u64) -> Result<CoreWorkload> {
    Ok(if std::path::Path::new(&a.target).is_file() {
        let w = load_workload(&a.target, Some(&a.target), records, ops)?;
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
    })
}

/// The tuning's specification from the flags.
fn tune_spec(a: &TuneArgs, target: CoreWorkload, memory: u64) -> TuneSpec {
    TuneSpec {
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
        objective: a.objective.get(),
        fitness: a.fitness.get(),
        matching: match a.matching {
            MatchingArg::Combined => Matching::Combined,
            MatchingArg::Nearest => Matching::Nearest,
        },
    }
}

/// The defaults measured on the target, how the target matched the repository's workloads, and how well the
/// surrogate ranks.
fn print_matching(r: &TuneReport) {
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
}

/// Each measured configuration's ratios to the defaults: the best probe, the model's pick, the candidates.
fn print_ratios(r: &TuneReport) {
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
}

/// `--out` (the chosen configuration), the line saying why it was chosen, and `--report`.
fn write_chosen(a: &TuneArgs, r: &TuneReport) -> Result<()> {
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

//! `cosine learn evaluate`: the held-out evaluation, every method's pick measured side by side on targets
//! outside the repository, and its table.

use super::common::{
    measurer, parse_workloads, EngineArg, FitnessArg, ObjectiveArg, RepositoryScale,
};
use anyhow::{bail, Context, Result};
use clap::Parser;
use cosine_learn::repo::Repository;
use std::time::Instant;

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

/// Runs `cosine learn evaluate`.
pub(super) fn evaluate_cmd(a: EvaluateArgs) -> Result<()> {
    use cosine_learn::evaluate::{check, evaluate_target, TargetRun};
    use cosine_learn::tune::{Matching, TuneSpec};
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
                objective: a.objective.get(),
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

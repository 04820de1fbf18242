//! `cosine learn`: tuning from measured runs (RTune). `collect` measures configurations into a repository;
//! `tune` probes a target workload, matches it to the repository's, learns a surrogate, searches it, and
//! measures the best candidates; `evaluate` runs the held-out evaluation. One module per subcommand, and what
//! they share (the engine measured, the objectives, the repository's scale) in `common`.

mod collect;
mod common;
mod evaluate;
mod tune;

use anyhow::Result;
use clap::Subcommand;
use collect::CollectArgs;
use evaluate::EvaluateArgs;
use tune::TuneArgs;

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

/// Runs `cosine learn ...`.
pub fn run(c: LearnCommand) -> Result<()> {
    match c {
        LearnCommand::Collect(a) => collect::collect_cmd(a),
        LearnCommand::Tune(a) => tune::tune_cmd(a),
        LearnCommand::Evaluate(a) => evaluate::evaluate_cmd(a),
    }
}

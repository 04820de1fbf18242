//! The command line's grammar ([`Cli`]) and the dispatch of each subcommand to the module that runs it. This
//! is the one module that names the command modules (`*_cmd`, `explore`); they import only helper modules
//! (`describe`, `search_args`, `ycsb_args`, `plot`), never one another.

use crate::describe::describe_mix;
use anyhow::Result;
use clap::{Parser, Subcommand};
use cosine_design::{named_workload, workload_names};

/// Cosine: searches storage-engine designs, cloud VMs and providers for a workload and a budget.
#[derive(Parser, Debug)]
#[command(name = "cosine", version, about, propagate_version = true)]
pub struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Endure's nominal (rho = 0) or robust (rho > 0) LSM tuning: size ratio, filter bits, buffer, policy.
    Tune(crate::endure_cmd::TuneArgs),
    /// Endure's uncertainty benchmark: nominal vs robust tuning over sampled workloads.
    Uncertainty(crate::endure_cmd::UncertaintyArgs),
    /// Per-operation I/O costs and the workload total of one design.
    Cost(crate::cost_cmd::CostArgs),
    /// The cost/performance continuum: which engine design, VMs and provider give the most throughput for a
    /// monthly budget.
    Search(Box<crate::search_args::SearchArgs>),
    /// Figure 5 as a table: Cosine against RocksDB-, WiredTiger- and FASTER-shaped designs at several budgets.
    Compare(crate::compare_cmd::CompareArgs),
    /// The what-if explorer: a local web page over the search (workload, budget, providers) and its JSON API.
    Explore(crate::explore::ExploreArgs),
    /// Serves an engine of a design over the Redis protocol (RESP2 and RESP3).
    Serve(crate::serve_cmd::ServeArgs),
    /// Plays an adversarial client suite against a `cosine serve` of its own: PING latency and the server's
    /// resident memory while slow, huge, unread and random clients and a connection flood press on it.
    Adversary(crate::adversary_cmd::AdversaryArgs),
    /// Writes a standalone engine project with the design fixed at compile time (or a multi-VM deployment).
    Generate(crate::generate_cmd::GenerateArgs),
    /// Moves the keys whose shard changes when a deployment grows (copy before the proxy switch, finish after).
    Rebalance(crate::rebalance_cmd::RebalanceArgs),
    /// YCSB core workloads on the engine: throughput, latency percentiles, I/Os per operation.
    Bench(crate::bench_cmd::BenchArgs),
    /// The model's I/O predictions against the engine's measured I/Os, per design class and workload.
    Validate(crate::validate_cmd::ValidateArgs),
    /// Algorithm 1: learns phi per design class and operation type on this machine.
    Calibrate(crate::bench_cmd::CalibrateArgs),
    /// Measures this machine (cores, memory, its disk's IOPS, bandwidth and latency, the CPU an operation costs)
    /// into a catalog of one VM, `local`, and a CPU library.
    Profile(Box<crate::profile_cmd::ProfileArgs>),
    /// The search's price tag checked on this machine: its pick, its next designs and RocksDB run in a memory
    /// cgroup, priced against measured.
    Verify(Box<crate::verify_cmd::VerifyArgs>),
    /// Writes a design in another engine's terms: `cosine export rocksdb` (a RocksDB OPTIONS file).
    #[command(subcommand)]
    Export(crate::export_cmd::ExportCommand),
    /// Tuning from measured runs (RTune): `cosine learn collect` measures configurations into a repository.
    #[command(subcommand)]
    Learn(crate::learn_cmd::LearnCommand),
    /// Lists the named workloads.
    Workloads,
}

/// Runs the parsed command.
pub fn run(cli: Cli) -> Result<()> {
    match cli.command {
        Command::Tune(a) => crate::endure_cmd::tune(a),
        Command::Uncertainty(a) => crate::endure_cmd::uncertainty_cmd(a),
        Command::Cost(a) => crate::cost_cmd::cost(a),
        Command::Search(a) => crate::search_cmd::run(*a),
        Command::Explore(a) => crate::explore::run(a),
        Command::Compare(a) => crate::compare_cmd::compare(a),
        Command::Serve(a) => crate::serve_cmd::run(a),
        Command::Adversary(a) => crate::adversary_cmd::run(a),
        Command::Generate(a) => crate::generate_cmd::run(a),
        Command::Rebalance(a) => crate::rebalance_cmd::run(a),
        Command::Bench(a) => crate::bench_cmd::bench(a),
        Command::Validate(a) => crate::validate_cmd::validate(a),
        Command::Calibrate(a) => crate::bench_cmd::calibrate(a),
        Command::Profile(a) => crate::profile_cmd::run(*a),
        Command::Verify(a) => crate::verify_cmd::run(*a),
        Command::Export(c) => crate::export_cmd::run(c),
        Command::Learn(c) => crate::learn_cmd::run(c),
        Command::Workloads => {
            for n in workload_names() {
                let w = named_workload(&n)?;
                println!("{n:<11} {}", describe_mix(&w));
            }
            Ok(())
        }
    }
}

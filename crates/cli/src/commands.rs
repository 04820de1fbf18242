//! The subcommands: tune, uncertainty, cost, workloads.

use anyhow::{anyhow, bail, Context, Result};
use clap::{Parser, Subcommand, ValueEnum};
use cosine_cost_model::endure::{EndureSystem, EndureVariant, Policy};
use cosine_cost_model::{DistributionAware, IoCost, IoModel, ReferenceQuirks, WorstCase};
use cosine_design::{load_design, load_workload, named_workload, workload_names, Workload};
use cosine_search::{tuning::TuneProblem, uncertainty, TuneResult};
use serde_json::json;

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
    Tune(TuneArgs),
    /// Endure's uncertainty benchmark: nominal vs robust tuning over sampled workloads.
    Uncertainty(UncertaintyArgs),
    /// Per-operation I/O costs and the workload total of one design.
    Cost(CostArgs),
    /// The cost/performance continuum: which engine design, VMs and provider give the most throughput for a
    /// monthly budget.
    Search(crate::search_cmd::SearchArgs),
    /// Figure 5 as a table: Cosine against RocksDB-, WiredTiger- and FASTER-shaped designs at several budgets.
    Compare(crate::search_cmd::CompareArgs),
    /// The what-if explorer: a local web page over the search (workload, budget, providers) and its JSON API.
    Explore(crate::explore::ExploreArgs),
    /// Serves an engine of a design over the Redis protocol (RESP2 and RESP3).
    Serve(crate::serve_cmd::ServeArgs),
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
    /// Writes a design in another engine's terms: `cosine export rocksdb` (a RocksDB OPTIONS file).
    #[command(subcommand)]
    Export(ExportCommand),
    /// Tuning from measured runs (RTune): `cosine learn collect` measures configurations into a repository.
    #[command(subcommand)]
    Learn(crate::learn_cmd::LearnCommand),
    /// Lists the named workloads.
    Workloads,
}

#[derive(Subcommand, Debug)]
enum ExportCommand {
    /// A RocksDB 7.x OPTIONS file for an LSM-class design (leveled or, approximately, universal compaction;
    /// B-tree-like, LSH and hybrid designs are refused).
    Rocksdb(ExportRocksdbArgs),
}

#[derive(Parser, Debug)]
struct ExportRocksdbArgs {
    /// The design.json file.
    #[arg(long)]
    design: String,
    /// Entries the database will hold (the Bloom filters' bits per key are M_BF over them).
    #[arg(long)]
    entries: u64,
    /// Bytes of one entry, key and value (sets how many levels RocksDB keeps room for).
    #[arg(long, default_value_t = 1024)]
    entry_bytes: u64,
    /// Bytes of one key (sets the index a design's M_FP must hold).
    #[arg(long, default_value_t = 16)]
    key_bytes: u64,
    /// Where to write the OPTIONS file ("-": standard output).
    #[arg(long, default_value = "-")]
    out: String,
}

#[derive(Clone, Copy, Debug, ValueEnum, PartialEq, Eq)]
enum EndureModel {
    /// Endure's Section 5 equations.
    Endure,
    /// The variant that Endure's public code computes.
    EndureCode,
}

#[derive(Parser, Debug, Clone)]
struct SystemArgs {
    /// Entries in the data set (N).
    #[arg(long, default_value_t = 10_000_000.0, allow_hyphen_values = true)]
    entries: f64,
    /// Bytes per entry (E).
    #[arg(long, default_value_t = 1024.0, allow_hyphen_values = true)]
    entry_bytes: f64,
    /// Bytes per page.
    #[arg(long, default_value_t = 4096.0, allow_hyphen_values = true)]
    page_bytes: f64,
    /// Memory for buffer and filters together, in bits per entry (at least 1 MiB stays for the buffer).
    #[arg(long, default_value_t = 10.0, allow_hyphen_values = true)]
    bits_per_entry: f64,
    /// Range selectivity S_RQ: fraction of the entries a range lookup returns.
    #[arg(long, default_value_t = 0.0, allow_hyphen_values = true)]
    selectivity: f64,
    /// Read/write asymmetry A_rw: a page write costs 1 + A_rw reads.
    #[arg(long, default_value_t = 1.0, allow_hyphen_values = true)]
    read_write_asymmetry: f64,
    /// Which form of Endure's model to use.
    #[arg(long, value_enum, default_value_t = EndureModel::Endure)]
    model: EndureModel,
}

impl SystemArgs {
    fn system(&self) -> Result<EndureSystem> {
        for (name, v) in [
            ("--entries", self.entries),
            ("--entry-bytes", self.entry_bytes),
            ("--page-bytes", self.page_bytes),
            ("--bits-per-entry", self.bits_per_entry),
        ] {
            if !(v.is_finite() && v > 0.0) {
                bail!("{name} must be a positive number, got {v}");
            }
        }
        let mut s = EndureSystem::new(
            self.entries,
            self.entry_bytes,
            self.page_bytes,
            self.bits_per_entry,
        );
        s.selectivity = self.selectivity;
        s.asymmetry = self.read_write_asymmetry;
        s.variant = match self.model {
            EndureModel::Endure => EndureVariant::Paper,
            EndureModel::EndureCode => EndureVariant::Code,
        };
        Ok(s)
    }
}

#[derive(Parser, Debug)]
struct TuneArgs {
    /// The expected workload: four fractions z0,z1,q,w (empty lookups, lookups, ranges, writes) or a name
    /// (endure-w0..endure-w14, ycsb-a..ycsb-f).
    #[arg(long, allow_hyphen_values = true)]
    workload: String,
    /// Radius of the KL ball of workloads to be robust against (0 = nominal tuning).
    #[arg(long, default_value_t = 0.0, allow_hyphen_values = true)]
    rho: f64,
    #[command(flatten)]
    system: SystemArgs,
    /// Print one JSON object.
    #[arg(long)]
    json: bool,
}

#[derive(Parser, Debug)]
struct UncertaintyArgs {
    /// The expected workload: a name (endure-w0..endure-w14, ycsb-a..f) or z0,z1,q,w.
    #[arg(long, allow_hyphen_values = true)]
    expected: String,
    /// Radius of the KL ball for the robust tuning.
    #[arg(long, allow_hyphen_values = true)]
    rho: f64,
    /// Sampled workloads in the benchmark set.
    #[arg(long, default_value_t = 10_000)]
    samples: usize,
    /// Seed of the sampler.
    #[arg(long, default_value_t = 0)]
    seed: u64,
    #[command(flatten)]
    system: SystemArgs,
    /// Print one JSON object.
    #[arg(long)]
    json: bool,
}

#[derive(Clone, Copy, Debug, ValueEnum, PartialEq, Eq)]
enum CostModel {
    /// Cosine's distribution-aware model (Table 2).
    DistributionAware,
    /// The Design Continuum's worst-case model.
    WorstCase,
}

#[derive(Clone, Copy, Debug, ValueEnum, PartialEq, Eq)]
enum Quirks {
    /// The fixed model.
    None,
    /// The authors' code's unfixed arithmetic.
    Reference,
}

#[derive(Parser, Debug)]
struct CostArgs {
    /// design.json file.
    #[arg(long)]
    design: String,
    /// A workload name (ycsb-a.., endure-w..) or a workload.json file.
    #[arg(long)]
    workload: String,
    /// Which I/O model.
    #[arg(long, value_enum, default_value_t = CostModel::DistributionAware)]
    model: CostModel,
    /// Evaluate with the authors' code's arithmetic.
    #[arg(long, value_enum, default_value_t = Quirks::None)]
    quirks: Quirks,
    /// Entries in the data set (overrides the workload's).
    #[arg(long, allow_hyphen_values = true)]
    entries: Option<f64>,
    /// Print one JSON object.
    #[arg(long)]
    json: bool,
}

/// Runs the parsed command.
pub fn run(cli: Cli) -> Result<()> {
    match cli.command {
        Command::Tune(a) => tune(a),
        Command::Uncertainty(a) => uncertainty_cmd(a),
        Command::Cost(a) => cost(a),
        Command::Search(a) => crate::search_cmd::run(a),
        Command::Explore(a) => crate::explore::run(a),
        Command::Compare(a) => crate::search_cmd::compare(a),
        Command::Serve(a) => crate::serve_cmd::run(a),
        Command::Generate(a) => crate::generate_cmd::run(a),
        Command::Rebalance(a) => crate::rebalance_cmd::run(a),
        Command::Bench(a) => crate::bench_cmd::bench(a),
        Command::Validate(a) => crate::validate_cmd::validate(a),
        Command::Calibrate(a) => crate::bench_cmd::calibrate(a),
        Command::Export(ExportCommand::Rocksdb(a)) => export_rocksdb(a),
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

fn export_rocksdb(a: ExportRocksdbArgs) -> Result<()> {
    let design = cosine_design::load_design(&a.design)?;
    let o = cosine_design::rocksdb::RocksDbOptions::for_design(
        &design,
        a.entries,
        a.entry_bytes,
        a.key_bytes,
    )
    .map_err(|e| anyhow::anyhow!("{}: {e}", a.design))?;
    let text = o.options_file();
    if a.out == "-" {
        print!("{text}");
    } else {
        std::fs::write(&a.out, text).with_context(|| format!("writing {}", a.out))?;
    }
    for n in &o.notes {
        eprintln!("approximate: {n}");
    }
    Ok(())
}

pub(crate) fn describe_mix(w: &Workload) -> String {
    w.mix
        .named()
        .iter()
        .filter(|(_, v)| *v > 0.0)
        .map(|(n, v)| format!("{n} {:.0}%", v * 100.0))
        .collect::<Vec<_>>()
        .join(", ")
}

/// (z0, z1, q, w) from a spec: four comma-separated fractions or a workload name. Named Cosine workloads map
/// empty lookups to z0, lookups and rmws to z1, scans to q, inserts, blind updates and rmws to w, renormalised.
fn endure_vector(spec: &str) -> Result<[f64; 4]> {
    if spec.contains(',') {
        let parts: Vec<&str> = spec.split(',').map(str::trim).collect();
        if parts.len() != 4 {
            bail!("workload '{spec}' must have four comma-separated fractions z0,z1,q,w");
        }
        let mut v = [0.0; 4];
        for (i, p) in parts.iter().enumerate() {
            v[i] = p
                .parse::<f64>()
                .map_err(|_| anyhow!("workload fraction '{p}' is not a number"))?;
            if !(v[i].is_finite() && (0.0..=1.0).contains(&v[i])) {
                bail!("workload fraction {} is outside [0, 1]", v[i]);
            }
        }
        let sum: f64 = v.iter().sum();
        if (sum - 1.0).abs() > 1e-9 {
            bail!("workload fractions sum to {sum}, not 1");
        }
        return Ok(v);
    }
    let w = named_workload(spec)?;
    let m = w.mix;
    let v = [
        m.empty_lookup,
        m.lookup + m.rmw,
        m.scan,
        m.insert + m.blind_update + m.rmw,
    ];
    let s: f64 = v.iter().sum();
    Ok(v.map(|x| x / s))
}

fn check_rho(rho: f64) -> Result<()> {
    if !(rho.is_finite() && rho >= 0.0) {
        bail!("--rho must be a non-negative number, got {rho}");
    }
    Ok(())
}

fn tuning_json(r: &TuneResult) -> serde_json::Value {
    json!({
        "policy": r.tuning.policy.as_str(),
        "size_ratio": r.tuning.size_ratio,
        "bits_per_entry": r.tuning.bits_per_entry,
        "buffer_bits": r.buffer_bits,
        "levels": r.levels,
        "costs": {"z0": r.costs[0], "z1": r.costs[1], "q": r.costs[2], "w": r.costs[3]},
        "cost": r.cost,
        "worst_case_cost": r.worst_case_cost,
        "worst_case_workload": r.worst_case_workload,
    })
}

fn fmt_bits(bits: f64) -> String {
    let bytes = bits / 8.0;
    if bytes >= 1024.0 * 1024.0 * 1024.0 {
        format!("{:.2} GiB", bytes / (1024.0 * 1024.0 * 1024.0))
    } else {
        format!("{:.2} MiB", bytes / (1024.0 * 1024.0))
    }
}

fn print_tuning(label: &str, r: &TuneResult) {
    let policy = match r.tuning.policy {
        Policy::Leveling => "leveling",
        Policy::Tiering => "tiering",
    };
    println!("{label}");
    println!("  policy                    {policy}");
    println!("  size ratio T              {:.2}", r.tuning.size_ratio);
    println!("  filter bits per entry h   {:.3}", r.tuning.bits_per_entry);
    println!(
        "  buffer memory             {} ({:.0} bits)",
        fmt_bits(r.buffer_bits),
        r.buffer_bits
    );
    println!("  levels L                  {}", r.levels);
    println!(
        "  I/Os per op               Z0 {:.4}   Z1 {:.4}   Q {:.4}   W {:.4}",
        r.costs[0], r.costs[1], r.costs[2], r.costs[3]
    );
}

fn tune(a: TuneArgs) -> Result<()> {
    check_rho(a.rho)?;
    let w = endure_vector(&a.workload)?;
    let sys = a.system.system()?;
    let problem = TuneProblem::new(sys, w, a.rho)?;
    let r = problem.solve();
    if a.json {
        let mut v = tuning_json(&r);
        v["workload"] = json!(w);
        v["rho"] = json!(a.rho);
        v["model"] = json!(if sys.variant == EndureVariant::Paper {
            "endure"
        } else {
            "endure-code"
        });
        println!("{}", serde_json::to_string_pretty(&v)?);
        return Ok(());
    }
    let kind = if a.rho > 0.0 {
        format!("robust tuning, rho = {}", a.rho)
    } else {
        "nominal tuning".into()
    };
    println!(
        "Endure {kind} ({} model) for (z0, z1, q, w) = ({:.4}, {:.4}, {:.4}, {:.4})",
        if sys.variant == EndureVariant::Paper {
            "paper"
        } else {
            "code"
        },
        w[0],
        w[1],
        w[2],
        w[3]
    );
    println!(
        "system: {} entries x {} B, {} B pages, {} bits of memory per entry",
        a.system.entries, a.system.entry_bytes, a.system.page_bytes, a.system.bits_per_entry
    );
    print_tuning("tuning:", &r);
    println!("  cost at expected workload {:.4} I/Os per op", r.cost);
    if a.rho > 0.0 {
        let ww = r.worst_case_workload;
        println!(
            "  worst case in KL ball     {:.4} I/Os per op, at (z0, z1, q, w) = ({:.3}, {:.3}, {:.3}, {:.3})",
            r.worst_case_cost, ww[0], ww[1], ww[2], ww[3]
        );
    }
    Ok(())
}

fn uncertainty_cmd(a: UncertaintyArgs) -> Result<()> {
    check_rho(a.rho)?;
    if a.samples == 0 {
        bail!("--samples must be at least 1");
    }
    let w = endure_vector(&a.expected)?;
    let sys = a.system.system()?;
    let bench = uncertainty::sample_workloads(a.samples, a.seed);
    let r = uncertainty::run(sys, w, a.rho, &bench)?;
    if a.json {
        let v = json!({
            "expected": w,
            "rho": a.rho,
            "samples": a.samples,
            "seed": a.seed,
            "nominal": tuning_json(&r.nominal),
            "robust": tuning_json(&r.robust),
            "delta_throughput": r.delta,
            "robust_wins": r.robust_wins,
            "throughput_range": {"nominal": r.throughput_range_nominal, "robust": r.throughput_range_robust},
        });
        println!("{}", serde_json::to_string_pretty(&v)?);
        return Ok(());
    }
    println!(
        "Endure uncertainty benchmark: expected (z0, z1, q, w) = ({:.2}, {:.2}, {:.2}, {:.2}), rho = {}, {} sampled workloads (seed {})",
        w[0], w[1], w[2], w[3], a.rho, a.samples, a.seed
    );
    print_tuning("nominal tuning:", &r.nominal);
    print_tuning("robust tuning:", &r.robust);
    let d = r.delta;
    println!("normalized delta throughput of robust over nominal, over the sampled workloads:");
    println!(
        "  mean {:+.1}%   q1 {:+.1}%   median {:+.1}%   q3 {:+.1}%   robust faster on {:.1}% of them",
        d.mean * 100.0,
        d.q1 * 100.0,
        d.median * 100.0,
        d.q3 * 100.0,
        r.robust_wins * 100.0
    );
    println!(
        "throughput range (max - min of 1/cost): nominal {:.4}, robust {:.4}",
        r.throughput_range_nominal, r.throughput_range_robust
    );
    Ok(())
}

fn cost(a: CostArgs) -> Result<()> {
    let design = load_design(&a.design).with_context(|| format!("design {}", a.design))?;
    let mut workload =
        load_workload(&a.workload).with_context(|| format!("workload {}", a.workload))?;
    if let Some(n) = a.entries {
        if !(n.is_finite() && n >= 1.0 && n.fract() == 0.0) {
            bail!("--entries must be a positive whole number, got {n}");
        }
        workload.entries = n as u64;
    }
    let quirks = match a.quirks {
        Quirks::None => ReferenceQuirks::NONE,
        Quirks::Reference => ReferenceQuirks::ALL,
    };
    let c: IoCost = match a.model {
        CostModel::DistributionAware => DistributionAware {
            quirks,
            ..Default::default()
        }
        .evaluate(&design, &workload)?,
        CostModel::WorstCase => WorstCase.evaluate(&design, &workload)?,
    };
    if a.json {
        let mut v = serde_json::to_value(&c)?;
        v["model"] = json!(match a.model {
            CostModel::DistributionAware => "distribution-aware",
            CostModel::WorstCase => "worst-case",
        });
        v["quirks"] = json!(a.quirks == Quirks::Reference);
        v["workload"] = json!(workload.name.clone().unwrap_or_else(|| a.workload.clone()));
        println!("{}", serde_json::to_string_pretty(&v)?);
        return Ok(());
    }
    let name = workload.name.clone().unwrap_or_else(|| a.workload.clone());
    println!(
        "{} model{} | design: T={} K={} Z={} block {} B, M_B {} B, M_BF {} B, M_FP {} B",
        match a.model {
            CostModel::DistributionAware => "distribution-aware",
            CostModel::WorstCase => "worst-case",
        },
        if a.quirks == Quirks::Reference {
            " (reference quirks)"
        } else {
            ""
        },
        design.size_ratio,
        design.hot_runs,
        design.cold_runs,
        design.block_bytes,
        design.buffer_bytes,
        design.filter_bytes,
        design.fence_bytes
    );
    println!(
        "workload {name}: {} entries of {} B, {} operations{} ({})",
        workload.entries,
        workload.entry_bytes(),
        workload.operations,
        if workload.operations_before > 0 {
            format!(" after {} run before", workload.operations_before)
        } else {
            String::new()
        },
        describe_mix(&workload)
    );
    println!(
        "class {}, L = {} levels, Y = {} cold, R (sum of FPRs) = {:.5}",
        c.class, c.levels, c.cold_levels, c.fpr_sum
    );
    println!("expected I/Os per operation:");
    let p = c.per_op;
    for (n, v) in [
        ("lookup", p.lookup),
        ("empty lookup", p.empty_lookup),
        ("insert", p.insert),
        ("blind update", p.blind_update),
        ("read-modify-write", p.rmw),
        ("long scan", p.long_scan),
        ("short scan", p.short_scan),
    ] {
        println!("  {n:<18} {v:>12.5}");
    }
    println!(
        "workload: {:.5} I/Os per operation, {:.4e} I/Os in total (Eq. 1)",
        c.per_operation, c.total
    );
    Ok(())
}

//! `cosine tune` and `cosine uncertainty`: Endure's nominal and robust LSM tuning, and its uncertainty
//! benchmark (nominal against robust over sampled workloads).

use anyhow::{anyhow, bail, Result};
use clap::{Parser, ValueEnum};
use cosine_cost_model::endure::{EndureSystem, EndureVariant, Policy};
use cosine_design::named_workload;
use cosine_search::{tuning::TuneProblem, uncertainty, TuneResult};
use serde_json::json;

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
pub(crate) struct TuneArgs {
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
pub(crate) struct UncertaintyArgs {
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

pub(crate) fn tune(a: TuneArgs) -> Result<()> {
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

pub(crate) fn uncertainty_cmd(a: UncertaintyArgs) -> Result<()> {
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

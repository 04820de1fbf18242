//! `cosine compare`: Figure 5 as a table, Cosine against the fixed designs (RocksDB-, WiredTiger- and
//! FASTER-shaped) at several budgets, from one search over the whole range.

use crate::search_args::{positive_int, run_with_progress};
use anyhow::{anyhow, bail, Context, Result};
use clap::Parser;
use cosine_cost_model::cpu::PhiLibrary;
use cosine_design::load_workload;
use cosine_search::continuum::SearchOptions;
use cosine_search::designs::Baseline;

/// `cosine compare`: Figure 5 as a table.
#[derive(Parser, Debug)]
pub struct CompareArgs {
    /// A workload name or workload.json file.
    #[arg(long)]
    workload: String,
    /// Budgets in USD per month, comma-separated.
    #[arg(long, default_value = "1000,5000,20000,50000")]
    budgets: String,
    /// Providers to search.
    #[arg(long, default_value = "aws,gcp,azure")]
    providers: String,
    /// Price catalog: "current", "paper" or a file.
    #[arg(long, default_value = "current")]
    catalog: String,
    /// Entries in the data set (overrides the workload's).
    #[arg(long, allow_hyphen_values = true)]
    entries: Option<f64>,
    /// Print one JSON document.
    #[arg(long)]
    json: bool,
}

/// Runs `cosine compare`: one search over the whole range, read at each budget.
pub fn compare(a: CompareArgs) -> Result<()> {
    let mut budgets = Vec::new();
    for b in a
        .budgets
        .split(',')
        .map(str::trim)
        .filter(|s| !s.is_empty())
    {
        let v: f64 = b
            .parse()
            .map_err(|_| anyhow!("budget '{b}' is not a number"))?;
        if !(v.is_finite() && v > 0.0) {
            bail!("budgets must be positive, got {v}");
        }
        budgets.push(v);
    }
    if budgets.is_empty() {
        bail!("--budgets names no budget");
    }
    let mut workload =
        load_workload(&a.workload).with_context(|| format!("workload {}", a.workload))?;
    if let Some(n) = positive_int("--entries", a.entries)? {
        workload.entries = n;
    }
    let catalog = cosine_cloud_pricing::load(&a.catalog)?;
    let top = budgets.iter().cloned().fold(0.0, f64::max);
    let mut opts = SearchOptions::new(top);
    opts.providers = Vec::new();
    for p in a
        .providers
        .split(',')
        .map(|s| s.trim().to_ascii_lowercase())
        .filter(|s| !s.is_empty())
    {
        if !catalog.providers.iter().any(|x| x.id == p) {
            bail!("unknown provider '{p}' (known: aws, gcp, azure)");
        }
        opts.providers.push(p);
    }
    let r = run_with_progress(&catalog, &workload, &PhiLibrary::default(), opts)?;
    let rows: Vec<serde_json::Value> = budgets
        .iter()
        .map(|&b| {
            let best = cosine_search::continuum::best_within(&r.frontier, b);
            let mut row = serde_json::json!({
                "budget": b,
                "cosine": best.map(|c| serde_json::json!({"throughput": c.throughput, "provider": c.provider, "vms": c.describe(), "class": c.parts[0].design.class, "monthly_usd": c.monthly_usd()})),
            });
            for (sys, f) in &r.baselines {
                let c = cosine_search::continuum::best_within(f, b);
                row[sys.name()] = serde_json::json!(c.map(|c| c.throughput));
            }
            row
        })
        .collect();
    if a.json {
        println!(
            "{}",
            serde_json::to_string_pretty(
                &serde_json::json!({"workload": workload.name, "rows": rows})
            )?
        );
        return Ok(());
    }
    println!("{}: throughput (ops/s) at each monthly budget; the fixed designs choose their best hardware too", workload.name.clone().unwrap_or(a.workload));
    print!(
        "{:>10}  {:>14}  {:<34}",
        "budget", "Cosine", "(provider, VMs, class)"
    );
    for s in Baseline::ALL {
        print!("  {:>18}", s.name());
    }
    println!();
    for (b, row) in budgets.iter().zip(&rows) {
        let cosine = cosine_search::continuum::best_within(&r.frontier, *b);
        match cosine {
            Some(c) => print!(
                "{:>10}  {:>14.0}  {:<34}",
                format!("${b:.0}"),
                c.throughput,
                format!(
                    "{}, {}, {}",
                    c.provider,
                    c.describe(),
                    c.parts[0].design.class
                )
            ),
            None => print!(
                "{:>10}  {:>14}  {:<34}",
                format!("${b:.0}"),
                "-",
                "(nothing fits)"
            ),
        }
        for s in Baseline::ALL {
            match row[s.name()].as_f64() {
                Some(t) => {
                    let x = cosine.map(|c| c.throughput / t).unwrap_or(f64::NAN);
                    print!("  {:>10.0} ({:>4.1}x)", t, x)
                }
                None => print!("  {:>18}", "cannot run"),
            }
        }
        println!();
    }
    Ok(())
}

//! `cosine cost`: one design's I/O costs per operation and for a whole workload, under Cosine's
//! distribution-aware model or the Design Continuum's worst-case one.

use crate::describe::describe_mix;
use anyhow::{bail, Context, Result};
use clap::{Parser, ValueEnum};
use cosine_cost_model::{DistributionAware, IoCost, IoModel, ReferenceQuirks, WorstCase};
use cosine_design::{load_design, load_workload};
use serde_json::json;

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
pub(crate) struct CostArgs {
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

pub(crate) fn cost(a: CostArgs) -> Result<()> {
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

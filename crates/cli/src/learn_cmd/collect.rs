//! `cosine learn collect`: measures configurations (the defaults, the model's pick, Latin-hypercube samples) on
//! workloads into a repository, resuming where a stopped collection stopped.

use super::common::{measurer, parse_workloads, EngineArg};
use anyhow::{bail, Result};
use clap::Parser;
use cosine_learn::collect::{collect, CollectPlan};
use cosine_learn::repo::Repository;
use std::time::{Duration, Instant};

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

/// Runs `cosine learn collect`.
pub(super) fn collect_cmd(a: CollectArgs) -> Result<()> {
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

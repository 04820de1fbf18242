//! `cosine validate`: the I/O model's predictions against what the engine measures, per operation type, on the
//! four fixed class designs (the ones the model's fixes were checked on) or on held-out designs it was never
//! tuned on (the designs the search picks for YCSB A-F at two memory sizes and two scales, and random valid
//! designs from a seed), on one or two client threads.

use crate::ycsb_args::{load_workload, SyncArg};
use anyhow::{bail, Result};
use clap::{Parser, ValueEnum};
use cosine_design::DesignClass;
use cosine_engine::SyncMode;
use cosine_validate::{class_designs, fixed_variants, run_case_loads, summary, CaseSpec, Pace};
use cosine_ycsb::CoreWorkload;
use serde_json::{json, Value};

/// Arguments of `cosine validate`.
#[derive(Parser, Debug)]
pub struct ValidateArgs {
    /// Records loaded per run (held-out: the smaller of the two scales; the other is twice it).
    #[arg(long, default_value_t = 200_000)]
    records: u64,
    /// Operations per run.
    #[arg(long, default_value_t = 50_000)]
    ops: u64,
    /// Engine memory in bytes (buffer + filters + fences); held-out: the smaller of two sizes, the other 4×.
    #[arg(long, default_value_t = 8 << 20)]
    memory: u64,
    /// Workloads (comma-separated YCSB names).
    #[arg(long, default_value = "ycsb-a,ycsb-b,ycsb-c,ycsb-d,ycsb-e,ycsb-f")]
    workloads: String,
    /// Fixed designs only: the classes to run (comma-separated: lsm, btree, lsh, hybrid).
    #[arg(long, default_value = "lsm,btree,lsh,hybrid")]
    classes: String,
    /// Also run uniform-key variants of the workloads (fixed designs only).
    #[arg(long)]
    uniform: bool,
    /// Validate on held-out designs instead of the four fixed ones: the search's pick for every workload at
    /// two memory sizes and two scales, plus `--random` random valid designs.
    #[arg(long)]
    held_out: bool,
    /// design.json files to validate instead of the fixed or held-out designs (comma-separated): each runs on
    /// every workload of `--workloads` at `--records`; their memory is their own (`--memory` is not used).
    #[arg(long, value_name = "DESIGN.json,...")]
    design: Option<String>,
    /// Random designs in the held-out set, each with a workload drawn from `--workloads`.
    #[arg(long, default_value_t = 20)]
    random: usize,
    /// Seed of the random designs.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Client thread counts, comma-separated: every case runs once per count (default 1; held-out: 1,2).
    #[arg(long)]
    threads: Option<String>,
    /// Loads per cell: each cell loads a fresh engine this many times and reports the median of what they
    /// measured (under `--pace free` one load can leave a different tree from the next: the engine's merges
    /// run beside the writer; paced loads repeat their figures but for the entry cache's and the page
    /// residency's). A read-only cell given more than one load spreads them over ±5% of its records and
    /// reports their mean: the window of load ends the model averages over (`--read-only-loads` sets their
    /// count apart).
    #[arg(long, default_value_t = 1)]
    loads: usize,
    /// Loads per read-only cell (YCSB-C), in place of `--loads` for those cells: a read-only cell given N > 1
    /// loads spreads exactly N evenly over ±5% of its records (the window of load ends the model averages
    /// over) and reports their mean. Where a level spills within that window a lookup's cost can swing 2-3×,
    /// and three points estimate the window's mean poorly: held-out seed 19's B-tree-like design #9 (T = 8,
    /// K = 6, Z = 7, 30,000 records, priced 9.96 blocks a lookup) measured 8.63 over 3 loads and 9.78 over 11
    /// (range 5.10-12.43) and over 21 (5.10-13.33); one load at exactly 30,000 records read 5.10. Costly for
    /// designs with small buffers (a search pick with a 5 KiB buffer takes about a minute a load here), so it
    /// is not the default.
    #[arg(long)]
    read_only_loads: Option<usize>,
    /// The log's sync mode the engine runs with.
    #[arg(long, value_enum, default_value_t = SyncArg::Never)]
    sync: SyncArg,
    /// How the client paces its writes against the engine's flushes and merges (load, warm-up and run).
    #[arg(long, value_enum, default_value_t = PaceArg::Merged)]
    pace: PaceArg,
    /// Print one JSON document.
    #[arg(long)]
    json: bool,
    /// Also draw the accuracy per workload and class as an SVG bar chart (fixed designs only).
    #[arg(long)]
    plot: Option<String>,
    /// Instead of running the engine: price the cells of a saved report (`--json`) again with the current
    /// model, keeping what the engine measured, and print the table (or `--json`) as a run would.
    #[arg(long, value_name = "REPORT.json")]
    rescore: Option<String>,
}

/// How validate's client paces its writes, as `--pace` spells it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum PaceArg {
    /// Wait for the flushes and merges after every quarter of a flush's writes: each flush gets its own merge and the
    /// tree keeps its design's shape, as the model prices a design.
    Merged,
    /// Write as fast as the engine takes it: a writer that outruns the merges lets one merge take several
    /// flushed runs (fewer block writes a write than the design's rules; the tree's shape depends on speeds).
    Free,
}

impl From<PaceArg> for Pace {
    fn from(p: PaceArg) -> Pace {
        match p {
            PaceArg::Merged => Pace::Merged,
            PaceArg::Free => Pace::Free,
        }
    }
}

fn workloads(a: &ValidateArgs, records: u64) -> Result<Vec<CoreWorkload>> {
    let mut out = Vec::new();
    for n in a
        .workloads
        .split(',')
        .map(str::trim)
        .filter(|s| !s.is_empty())
    {
        let w = load_workload(n, None, records, a.ops)?;
        if a.uniform && !a.held_out {
            let mut u = w.clone();
            u.distribution = cosine_ycsb::Distribution::Uniform;
            u.name = format!("{}-uniform", w.name);
            out.push(u);
        }
        out.push(w);
    }
    if out.is_empty() {
        bail!("--workloads names no workload");
    }
    Ok(out)
}

/// Runs `cosine validate`: predicted against measured I/Os per operation, per design class and workload.
pub fn validate(mut a: ValidateArgs) -> Result<()> {
    if let Some(path) = a.rescore.take() {
        let text =
            std::fs::read_to_string(&path).map_err(|e| anyhow::anyhow!("--rescore {path}: {e}"))?;
        let report: Value = serde_json::from_str(&text)
            .map_err(|e| anyhow::anyhow!("--rescore {path}: not a validate report: {e}"))?;
        let rows = cosine_validate::rescore(&report)?;
        a.held_out = report["held_out"].as_bool().unwrap_or(false);
        a.design = report["designs"].as_str().map(str::to_string);
        for (field, value) in [
            (&mut a.records, "records"),
            (&mut a.ops, "ops"),
            (&mut a.memory, "memory"),
            (&mut a.seed, "seed"),
        ] {
            *field = report[value].as_u64().unwrap_or(*field);
        }
        a.loads = report["loads"].as_u64().map_or(1, |n| n.max(1) as usize);
        a.read_only_loads = report["read_only_loads"]
            .as_u64()
            .map(|n| n.max(1) as usize);
        // (a report without one ran unsynced)
        a.sync = report["sync"]
            .as_str()
            .and_then(|n| SyncArg::from_str(n, false).ok())
            .unwrap_or(SyncArg::Never);
        // (a report without one ran its writer free)
        a.pace = report["pace"]
            .as_str()
            .and_then(|n| PaceArg::from_str(n, false).ok())
            .unwrap_or(PaceArg::Free);
        return report_rows(&a, &rows);
    }
    let threads: Vec<usize> = match &a.threads {
        Some(list) => list
            .split(',')
            .map(|t| t.trim().parse::<usize>())
            .collect::<Result<_, _>>()
            .map_err(|_| anyhow::anyhow!("--threads wants thread counts such as 1,2"))?,
        None if a.held_out => vec![1, 2],
        None => vec![1],
    };
    if threads.is_empty() || threads.contains(&0) {
        bail!("--threads wants counts of at least 1");
    }
    if a.loads == 0 || a.read_only_loads == Some(0) {
        bail!("--loads and --read-only-loads want at least 1 load a cell");
    }
    let mut classes = Vec::new();
    for name in a.classes.split(',').map(str::trim) {
        let class = [
            DesignClass::Lsm,
            DesignClass::Btree,
            DesignClass::Lsh,
            DesignClass::Hybrid,
        ]
        .into_iter()
        .find(|c| c.as_str() == name);
        match class {
            Some(c) => classes.push(c),
            None => bail!("--classes: unknown class {name:?} (lsm, btree, lsh, hybrid)"),
        }
    }
    let mut designs = Vec::new();
    for path in a
        .design
        .iter()
        .flat_map(|list| list.split(','))
        .map(str::trim)
    {
        let d = cosine_design::load_design(path).map_err(|e| match e {
            cosine_design::LoadError::Invalid(e) => {
                anyhow::anyhow!("--design {path}: not a design.json: {e}")
            }
            e => anyhow::anyhow!("--design {path}: {e}"),
        })?;
        let name = std::path::Path::new(path)
            .file_name()
            .map_or(path.to_string(), |n| n.to_string_lossy().into_owned());
        designs.push((name, d));
    }
    if !designs.is_empty() && a.held_out {
        bail!("--design and --held-out pick the designs two ways; give one");
    }
    let spec = CaseSpec {
        designs,
        records: a.records,
        memory: a.memory,
        held_out: a.held_out,
        random: a.random,
        seed: a.seed,
        threads,
        classes,
    };
    let cases = cosine_validate::cases(&spec, |records| {
        workloads(&a, records).map_err(|e| cosine_validate::Error::Invalid(e.to_string()))
    })?;
    let mut rows = Vec::new();
    for (i, c) in cases.iter().enumerate() {
        if !a.json {
            eprint!(
                "\r[{}/{}] {} {} ...",
                i + 1,
                cases.len(),
                c.label,
                c.workload.name
            );
        }
        let loads = match a.read_only_loads {
            Some(n) if c.workload.read_only() => n,
            _ => a.loads,
        };
        rows.push(run_case_loads(c, i, loads, a.sync.into(), a.pace.into())?);
    }
    if !a.json {
        eprintln!();
    }
    report_rows(&a, &rows)
}

/// Prints a run's (or a rescored report's) rows: the table, or one JSON document; draws the plot if asked.
fn report_rows(a: &ValidateArgs, rows: &[Value]) -> Result<()> {
    if let Some(plot) = &a.plot {
        if a.held_out || a.design.is_some() {
            bail!("--plot draws the fixed designs' table; leave out --held-out and --design");
        }
        plot_fixed(a, rows, plot)?;
    }
    if a.json {
        println!(
            "{}",
            serde_json::to_string_pretty(&json!({
                "records": a.records, "ops": a.ops, "memory": a.memory, "held_out": a.held_out, "loads": a.loads,
                "read_only_loads": a.read_only_loads.unwrap_or(a.loads),
                "sync": SyncMode::from(a.sync).name(), "pace": Pace::from(a.pace).name(),
                "seed": a.seed, "designs": a.design, "rows": rows, "summary": summary(rows),
            }))?
        );
        return Ok(());
    }
    print_table(a, rows);
    Ok(())
}

fn plot_fixed(a: &ValidateArgs, rows: &[Value], plot: &str) -> Result<()> {
    let mut names: Vec<String> = Vec::new();
    for r in rows {
        let n = r["workload"].as_str().unwrap_or("").to_string();
        if !names.contains(&n) {
            names.push(n);
        }
    }
    let labels: Vec<String> = class_designs(a.memory)
        .iter()
        .flat_map(|(c, d)| fixed_variants(*c, d))
        .map(|(label, _)| label)
        .collect();
    let series: Vec<(String, Vec<f64>)> = labels
        .iter()
        .map(|c| {
            let label = format!("fixed {c}");
            let values = names
                .iter()
                .map(|n| {
                    rows.iter()
                        .find(|r| r["label"] == label.as_str() && r["workload"] == n.as_str())
                        .and_then(|r| r["accuracy"].as_f64())
                        .map_or(f64::NAN, |x| 100.0 * x.max(0.0))
                })
                .collect();
            (c.clone(), values)
        })
        .collect();
    crate::plot::write_bars(
        plot,
        "model accuracy against the engine: 1 − |predicted − measured| / measured",
        "accuracy (%)",
        &names,
        &series,
        0.0..130.0,
    )?;
    if !a.json {
        println!("wrote {plot}");
    }
    Ok(())
}

fn print_table(a: &ValidateArgs, rows: &[Value]) {
    println!(
        "I/Os per operation, model against engine ({} operations, {}{}{}{})",
        a.ops,
        match (a.pace, SyncMode::from(a.sync)) {
            (PaceArg::Merged, _) => "each flush merged before the next",
            (PaceArg::Free, SyncMode::Never) => "the writer free of the merges",
            (PaceArg::Free, _) => "the writer paced by its log's syncs only",
        },
        match SyncMode::from(a.sync) {
            SyncMode::Never => String::new(),
            s => format!(", log synced: {}", s.name()),
        },
        match (a.loads, a.read_only_loads.unwrap_or(a.loads)) {
            (1, 1) => String::new(),
            (n, r) if n == r => format!(
                ", the median of {n} loads a cell (a read-only cell: the mean of {r} spread over ±5% of its records)"
            ),
            (n, r) => format!(
                ", {n} load(s) a cell, their median (a read-only cell: {r} load(s), the mean when spread over ±5% of its records)"
            ),
        },
        if let Some(files) = &a.design {
            format!(", {} records, the designs of {files}", a.records)
        } else if a.held_out {
            format!(", held-out designs: search picks at {} and {} MiB over {}k and {}k records, {} random designs from seed {}", a.memory >> 20, (4 * a.memory) >> 20, a.records / 1000, 2 * a.records / 1000, a.random, a.seed)
        } else {
            format!(
                ", {} records, {} bytes of engine memory, the four fixed class designs",
                a.records, a.memory
            )
        }
    );
    println!(
        "{:<24} {:<7} {:<14} {:>3} {:>10} {:>10} {:>9}  {:>15} {:>15} {:>15}",
        "design",
        "class",
        "workload",
        "thr",
        "predicted",
        "measured",
        "accuracy",
        "lookup p/m",
        "scan p/m",
        "write p/m"
    );
    for r in rows {
        let pm = |k: &str| match (r[k]["predicted"].as_f64(), r[k]["measured"].as_f64()) {
            (Some(p), Some(m)) => format!("{p:.2}/{m:.2}"),
            _ => "-".to_string(),
        };
        println!(
            "{:<24} {:<7} {:<14} {:>3} {:>10.3} {:>10.3} {:>8.1}%  {:>15} {:>15} {:>15}",
            r["label"].as_str().unwrap_or(""),
            r["class"].as_str().unwrap_or(""),
            r["workload"].as_str().unwrap_or(""),
            r["threads"],
            r["predicted"].as_f64().unwrap_or(f64::NAN),
            r["measured"].as_f64().unwrap_or(f64::NAN),
            r["accuracy"].as_f64().unwrap_or(f64::NAN) * 100.0,
            pm("lookup"),
            pm("scan"),
            pm("write"),
        );
    }
    let s = summary(rows);
    let pct = |v: &Value, k: &str| {
        v[k]["mean"].as_f64().map_or("-".to_string(), |m| {
            format!(
                "{:.1}% (worst {:.1}%)",
                100.0 * m,
                100.0 * v[k]["worst"].as_f64().unwrap_or(0.0)
            )
        })
    };
    if let Some(obj) = s.as_object() {
        for (c, v) in obj {
            println!(
                "mean accuracy {c}: {} over {} cells; lookups {}, scans {}, writes {}",
                pct(v, "total"),
                v["total"]["cells"],
                pct(v, "lookup"),
                pct(v, "scan"),
                pct(v, "write")
            );
        }
    }
}

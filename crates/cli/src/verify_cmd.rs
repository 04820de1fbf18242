//! `cosine verify`: the price tag checked on a machine of one's own. The search prices a workload on the
//! machine `cosine profile` measured (its catalog of one VM, `local`, with the memory cgroup's size as the VM's
//! memory); its pick, its next designs and RocksDB's fixed design are each run through `cosine-peers` in a
//! memory cgroup of that size with the data at least four times the cap (every result verified), and priced
//! is printed against measured: throughput, I/Os an operation, the ranking, and Cosine ÷ RocksDB.

use crate::describe;
use anyhow::{anyhow, bail, Context, Result};
use clap::Parser;
use cosine_cost_model::cpu::{CpuLibrary, PhiLibrary};
use cosine_cost_model::machine::ThroughputModel;
use cosine_search::continuum::{one_vm_designs, Part, SearchOptions};
use cosine_search::designs::{Baseline, Scored};
use cosine_ycsb::CoreWorkload;
use serde_json::{json, Value};
use std::path::{Path, PathBuf};

/// Arguments of `cosine verify`.
#[derive(Parser, Debug)]
pub struct VerifyArgs {
    /// A YCSB core workload: ycsb-a .. ycsb-f.
    #[arg(long)]
    workload: String,
    /// Records loaded (1 KB each).
    #[arg(long, default_value_t = 2_000_000)]
    records: u64,
    /// Operations timed (after a warm-up of `--warmup`).
    #[arg(long, default_value_t = 200_000)]
    ops: u64,
    /// Operations of the untimed warm-up before the timed run (default: as many as --ops). It warms the
    /// caches; a timed run long enough to hold whole merge cycles needs no warm-up as long.
    #[arg(long)]
    warmup: Option<u64>,
    /// The memory cgroup every design runs in, in bytes: the VM's memory the search prices.
    #[arg(long, default_value_t = 256 << 20)]
    memory_cap: u64,
    /// The machine's catalog from `cosine profile`.
    #[arg(long, default_value = "cosine-profile/machine.json")]
    catalog: String,
    /// CPU library (default: cpu.json beside the catalog, else the shipped one).
    #[arg(long)]
    cpu: Option<String>,
    /// Designs run: the search's pick and the next ones by the model's time, each shape once.
    #[arg(long, default_value_t = 5)]
    designs: usize,
    /// Client threads (the requests in flight the search prices; default: the machine's cores).
    #[arg(long)]
    threads: Option<usize>,
    /// Runs of each design (the median is compared): round after round, every design in each, their order
    /// rotated from round to round.
    #[arg(long, default_value_t = 1)]
    rounds: usize,
    /// The seed of the runs' keys and operations (cosine-peers' `--seed`): a fresh one checks the model on
    /// runs it was not fitted to.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Leave RocksDB out (its cells need cosine-peers built with `--features peers`).
    #[arg(long)]
    no_rocksdb: bool,
    /// The cosine-peers program (default: beside this one, or $COSINE_PEERS).
    #[arg(long)]
    peers: Option<PathBuf>,
    /// Where the databases live while they run.
    #[arg(long, default_value = "/tmp/cosine-verify")]
    dir: PathBuf,
    /// Only print what the search prices; run nothing.
    #[arg(long)]
    plan_only: bool,
    /// Print one JSON document.
    #[arg(long)]
    json: bool,
}

/// One design: what the search priced, and what its runs measured.
struct Checked {
    label: String,
    priced: Scored,
    /// Medians of the runs: operations a second, and the engine's blocks an operation (reads and background).
    measured: Option<(f64, Option<f64>)>,
    rows: Vec<Value>,
}

/// Runs `cosine verify`.
pub fn run(a: VerifyArgs) -> Result<()> {
    let w = workload(&a)?;
    let model = model_workload(&w, a.ops, a.warmup.unwrap_or(a.ops));
    let threads = a.threads;
    let (catalog, cpu) = machine(&a)?;
    let vcpus = catalog.providers[0].vms[0].vcpus;
    let threads = threads.unwrap_or(vcpus as usize).max(1);
    let mut opts = SearchOptions::new(1e12);
    opts.providers = vec!["local".into()];
    opts.max_vms = 1;
    opts.noise = 0.0;
    opts.throughput = ThroughputModel::Physical;
    opts.in_flight = Some(threads as f64);
    opts.cpu = cpu;
    let phi = PhiLibrary::default();
    let provider = &catalog.providers[0];
    let plan = one_vm_designs(&catalog, provider, 0, &model, &phi, &opts, a.designs.max(1))
        .ok_or_else(|| {
            anyhow!(
                "the search found no design for {} on this machine",
                a.workload
            )
        })?;
    if plan.designs.is_empty() {
        bail!(
            "the search found no design that fits {} on this machine",
            describe::bytes(a.memory_cap as f64)
        );
    }
    let part = plan.designs[0].clone();
    let mut checked: Vec<Checked> = plan
        .designs
        .iter()
        .enumerate()
        .map(|(i, p)| Checked {
            label: format!(
                "#{}{} {}",
                i + 1,
                if i == 0 { " (pick)" } else { "" },
                shape(&p.design)
            ),
            priced: p.design.clone(),
            measured: None,
            rows: Vec::new(),
        })
        .collect();
    let rocks = plan
        .baselines
        .iter()
        .find(|(b, _)| *b == Baseline::RocksDb)
        .and_then(|(_, s)| s.clone());
    let mut rocksdb = rocks.filter(|_| !a.no_rocksdb).map(|priced| Checked {
        label: "RocksDB (fixed design; run at its tuning guide's settings)".into(),
        priced,
        measured: None,
        rows: Vec::new(),
    });
    if !a.plan_only {
        let peers = peers_program(&a)?;
        std::fs::create_dir_all(&a.dir).with_context(|| format!("creating {}", a.dir.display()))?;
        let design_memory = part.design.design.memory_bytes();
        let mut files = Vec::new();
        for (i, c) in checked.iter().enumerate() {
            let file = a.dir.join(format!("design-{}.json", i + 1));
            std::fs::write(&file, c.priced.design.to_json() + "\n")?;
            files.push(file);
        }
        // round after round, every design and RocksDB in each, the order rotated from round to round: a slow
        // stretch of a shared machine falls on one round of several designs, not on every round of one
        let n = checked.len() + usize::from(rocksdb.is_some());
        for round in 0..a.rounds {
            for k in 0..n {
                let at = (k + round) % n;
                let cell = Cell {
                    round,
                    memory: design_memory,
                    threads,
                };
                match checked.get_mut(at) {
                    Some(c) => {
                        c.rows
                            .extend(run_cells(&a, &peers, "cosine", Some(&files[at]), cell)?)
                    }
                    None => {
                        if let Some(r) = rocksdb.as_mut() {
                            r.rows.extend(run_cells(&a, &peers, "rocksdb", None, cell)?);
                        }
                    }
                }
            }
        }
        for c in &mut checked {
            c.measured = medians(&c.rows, true);
        }
        if let Some(r) = rocksdb.as_mut() {
            r.measured = medians(&r.rows, false);
        }
    }
    let report = report(&a, &model, &part, &checked, rocksdb.as_ref(), threads);
    if a.json {
        println!("{}", serde_json::to_string_pretty(&report)?);
    } else {
        print_report(
            &a,
            &model,
            &part,
            &checked,
            rocksdb.as_ref(),
            &report,
            threads,
        );
    }
    Ok(())
}

/// The YCSB workload at the scale asked for.
fn workload(a: &VerifyArgs) -> Result<CoreWorkload> {
    let name = a.workload.trim_start_matches("ycsb-");
    let mut w = CoreWorkload::named(name)
        .filter(|_| a.workload.starts_with("ycsb-"))
        .ok_or_else(|| {
            anyhow!(
                "--workload must be a YCSB core workload, ycsb-a .. ycsb-f, got {}",
                a.workload
            )
        })?;
    if a.records == 0 || a.ops == 0 {
        bail!("--records and --ops must be at least 1");
    }
    if a.memory_cap < 16 << 20 {
        bail!("--memory-cap must be at least 16 MiB, got {}", a.memory_cap);
    }
    if a.rounds == 0 || a.designs == 0 {
        bail!("--rounds and --designs must be at least 1");
    }
    w.record_count = a.records;
    w.operation_count = a.ops;
    Ok(w)
}

/// The model's workload of a cell's timed run: the load's records, `ops` operations after `warmup` of a
/// warm-up.
fn model_workload(w: &CoreWorkload, ops: u64, warmup: u64) -> cosine_design::Workload {
    let mut m = w.to_model();
    m.operations = ops;
    m.operations_before = warmup;
    m
}

/// The machine's catalog with the cap as its VM's memory, and the CPU library.
fn machine(a: &VerifyArgs) -> Result<(cosine_cloud_pricing::Catalog, CpuLibrary)> {
    let mut catalog = cosine_cloud_pricing::load(&a.catalog).with_context(|| {
        format!(
            "{} (make it with `cosine profile --memory {}`)",
            a.catalog, a.memory_cap
        )
    })?;
    if catalog.name != "local" || catalog.providers.len() != 1 {
        bail!(
            "--catalog {} is not a machine's catalog from `cosine profile`",
            a.catalog
        );
    }
    catalog.providers[0].vms[0].memory_bytes = a.memory_cap;
    let beside = Path::new(&a.catalog).with_file_name("cpu.json");
    let cpu = match &a.cpu {
        Some(c) => CpuLibrary::named_or_file(c)?,
        None if beside.exists() => CpuLibrary::named_or_file(&beside.to_string_lossy())?,
        None => CpuLibrary::learned(),
    };
    Ok((catalog, cpu))
}

/// `cosine-peers`: `--peers`, `$COSINE_PEERS`, or beside this program.
fn peers_program(a: &VerifyArgs) -> Result<PathBuf> {
    let candidate = match (&a.peers, std::env::var_os("COSINE_PEERS")) {
        (Some(p), _) => p.clone(),
        (None, Some(p)) => PathBuf::from(p),
        (None, None) => std::env::current_exe()?.with_file_name("cosine-peers"),
    };
    if !candidate.exists() {
        bail!(
            "cosine verify runs each design through cosine-peers, not found at {}: build it with `cargo build --release -p cosine-peers --features peers` (ROCKSDB_LIB_DIR=/usr/lib/x86_64-linux-gnu) or give --peers",
            candidate.display()
        );
    }
    Ok(candidate)
}

/// One round of one engine: which round, the engine's memory and the client threads.
#[derive(Clone, Copy)]
struct Cell {
    round: usize,
    memory: u64,
    threads: usize,
}

/// The row of `engine`'s cell in round `cell.round` on the workload, in the memory cgroup: cosine-peers' round
/// of that number (its seed `--seed` + 10 × the round, as its own rounds take them), run alone.
fn run_cells(
    a: &VerifyArgs,
    peers: &Path,
    engine: &str,
    design: Option<&Path>,
    cell: Cell,
) -> Result<Vec<Value>> {
    let Cell {
        round,
        memory,
        threads,
    } = cell;
    let seed = a.seed + 10 * round as u64;
    let mut cmd = std::process::Command::new(peers);
    cmd.args([
        "--engines",
        engine,
        "--workloads",
        a.workload.trim_start_matches("ycsb-"),
    ])
    .args([
        "--records",
        &a.records.to_string(),
        "--ops",
        &a.ops.to_string(),
    ])
    .args([
        "--memory",
        &memory.to_string(),
        "--memory-cap",
        &a.memory_cap.to_string(),
    ])
    .args([
        "--threads",
        &threads.to_string(),
        "--rounds",
        "1",
        "--seed",
        &seed.to_string(),
    ])
    .args(["--warmup", &a.warmup.unwrap_or(a.ops).to_string()])
    .arg("--dir")
    .arg(a.dir.join("db"))
    .args(["--cap-or-warn", "--json"]);
    if let Some(d) = design {
        cmd.arg("--design").arg(d);
    }
    eprintln!(
        "round {round}: running {engine}{} ...",
        design.map_or(String::new(), |d| format!(" {}", d.display()))
    );
    let out = cmd
        .stderr(std::process::Stdio::inherit())
        .output()
        .with_context(|| format!("running {}", peers.display()))?;
    if !out.status.success() {
        bail!(
            "{} failed on {engine} (exit {:?})",
            peers.display(),
            out.status.code()
        );
    }
    let mut rows: Vec<Value> = serde_json::from_slice(&out.stdout).context("cosine-peers' rows")?;
    for r in &mut rows {
        r["round"] = json!(round);
    }
    Ok(rows)
}

/// Median run throughput and (where the engine counts them) blocks an operation over the rows that ran.
fn medians(rows: &[Value], counted: bool) -> Option<(f64, Option<f64>)> {
    let median = |mut v: Vec<f64>| {
        v.sort_by(f64::total_cmp);
        (!v.is_empty()).then(|| v[v.len() / 2])
    };
    let ok: Vec<&Value> = rows.iter().filter(|r| r["run"].is_number()).collect();
    let thr = median(ok.iter().filter_map(|r| r["run"].as_f64()).collect())?;
    let io = counted
        .then(|| {
            median(
                ok.iter()
                    .filter_map(|r| {
                        Some(r["read_ios_per_op"].as_f64()? + r["background_ios_per_op"].as_f64()?)
                    })
                    .collect(),
            )
        })
        .flatten();
    Some((thr, io))
}

/// "lsm T=6 K=1 Z=1" with its memory split.
fn shape(s: &Scored) -> String {
    let d = &s.design;
    format!(
        "{} T={} K={} Z={} M_B={} M_BF={} M_FP={} M_BC={}",
        s.class,
        d.size_ratio,
        d.hot_runs,
        d.cold_runs,
        describe::bytes(d.buffer_bytes as f64),
        describe::bytes(d.filter_bytes as f64),
        describe::bytes(d.fence_bytes as f64),
        describe::bytes(d.cache_bytes as f64)
    )
}

/// The bytes the records take (keys and values).
fn data_bytes(model: &cosine_design::Workload) -> f64 {
    model.entries as f64 * model.entry_bytes() as f64
}

/// Data below this many times the memory cap may stay in memory: reads would not reach the disk the search
/// prices.
const DATA_OVER_CAP: f64 = 4.0;

/// The timed run's writes over what the design's buffer holds before a flush: under about
/// [`STEADY_FLUSHES`], its flushes and merges fall mostly outside the timed run, which then measures less
/// background work than the priced steady state holds.
fn timed_flushes(a: &VerifyArgs, model: &cosine_design::Workload, s: &Scored) -> f64 {
    let written = a.ops as f64 * (model.mix.writes() + model.mix.rmw) * model.entry_bytes() as f64;
    written / s.design.flush_bytes() as f64
}

/// Flushes a timed run should hold to meet the merges the model prices (one merge of a level of T runs).
const STEADY_FLUSHES: f64 = 4.0;

/// The timed run's writes over the writes between two of their biggest merges (into the deepest level they
/// reach), and that cycle's writes ([`DistributionAware::write_cycle`](cosine_cost_model::DistributionAware::write_cycle)),
/// where the planner's simulation gives one. The model prices the cycle's mean: a timed run of fewer cycles
/// meets the deepest merge or not by its phase (a free-paced load leaves the levels at a phase of its own).
fn timed_cycles(a: &VerifyArgs, model: &cosine_design::Workload, s: &Scored) -> Option<(f64, f64)> {
    let cycle = cosine_cost_model::DistributionAware::new()
        .write_cycle(&s.design, model)
        .ok()
        .flatten()
        .filter(|c| *c > 0.0)?;
    let timed = a.ops as f64 * (model.mix.writes() + model.mix.rmw);
    Some((timed / cycle, cycle))
}

/// Whole cycles of the deepest merges a timed run should hold for its measured write I/O to be the cycle's
/// mean whatever its phase: a window of n whole cycles meets n of those merges (a shorter one, 0 or 1).
const STEADY_CYCLES: f64 = 3.0;

/// Operations a second the search priced for one VM running `s`.
fn priced_ops(s: &Scored, model: &cosine_design::Workload) -> f64 {
    model.operations as f64 / s.latency_s
}

/// The check as one JSON document.
fn report(
    a: &VerifyArgs,
    model: &cosine_design::Workload,
    part: &Part,
    checked: &[Checked],
    rocksdb: Option<&Checked>,
    threads: usize,
) -> Value {
    let row = |c: &Checked| {
        let priced = priced_ops(&c.priced, model);
        json!({
            "label": c.label, "design": c.priced.design, "class": c.priced.class,
            "priced_ops_per_s": priced, "priced_ios_per_op": c.priced.io_per_op,
            "bound": c.priced.delivered.map(|d| d.bound.as_str()),
            "priced_cpu_us_per_op": c.priced.cpu_s * 1e6,
            "priced_device_reads_per_op": c.priced.requests.device_reads(),
            "priced_page_cache_share": c.priced.requests.cached_share,
            "priced_op_latency_us": c.priced.delivered.map(|d| d.op_latency_s * 1e6),
            "timed_flushes": timed_flushes(a, model, &c.priced),
            "timed_write_cycles": timed_cycles(a, model, &c.priced).map(|c| c.0),
            "measured_ops_per_s": c.measured.map(|m| m.0),
            "measured_ios_per_op": c.measured.and_then(|m| m.1),
            "throughput_measured_over_priced": c.measured.map(|m| m.0 / priced),
            "ios_measured_over_priced": c.measured.and_then(|m| m.1).map(|io| io / c.priced.io_per_op),
            "rows": c.rows,
        })
    };
    let best_measured = checked
        .iter()
        .filter_map(|c| c.measured.map(|m| m.0))
        .fold(0.0, f64::max);
    let pick_over_best = checked
        .first()
        .and_then(|c| c.measured)
        .filter(|_| best_measured > 0.0)
        .map(|m| m.0 / best_measured);
    let ratio = |c: &Checked, r: &Checked| {
        let predicted = priced_ops(&c.priced, model) / priced_ops(&r.priced, model);
        let measured = c.measured.zip(r.measured).map(|(x, y)| x.0 / y.0);
        json!({"predicted": predicted, "measured": measured,
            "measured_over_predicted": measured.map(|m| m / predicted)})
    };
    // the cap enforced where every run went through a memory cgroup (cosine-peers reports its peak)
    let rows: Vec<&Value> = checked
        .iter()
        .chain(rocksdb)
        .flat_map(|c| &c.rows)
        .collect();
    let enforced = (!rows.is_empty()).then(|| rows.iter().all(|r| r["cgroup_peak_bytes"].is_u64()));
    json!({
        "workload": a.workload, "records": a.records, "operations": a.ops,
        "warmup": a.warmup.unwrap_or(a.ops), "memory_cap": a.memory_cap,
        "memory_enforced": enforced,
        "data_over_cap": data_bytes(model) / a.memory_cap as f64,
        "client_threads": threads, "rounds": a.rounds, "seed": a.seed,
        "machine": {"vcpus": part.vcpus, "iops": part.iops, "mibps": part.mibps,
            "read_latency_us": part.read_latency_us, "reserved_gib": part.reserved_gib},
        "designs": checked.iter().map(row).collect::<Vec<_>>(),
        "rocksdb": rocksdb.map(row),
        "pick_over_best_of_designs": pick_over_best,
        "cosine_over_rocksdb": checked.first().zip(rocksdb).map(|(c, r)| ratio(c, r)),
    })
}

fn print_report(
    a: &VerifyArgs,
    model: &cosine_design::Workload,
    part: &Part,
    checked: &[Checked],
    rocksdb: Option<&Checked>,
    report: &Value,
    threads: usize,
) {
    println!(
        "cosine verify: {}, {} records ({}) in a {} memory cgroup ({} to the design), {} client threads; this machine: {} cores, a disk of {} reads/s, {} MiB/s, {} a read's wait beyond its CPU",
        a.workload,
        describe::count(a.records as f64),
        describe::bytes(data_bytes(model)),
        describe::bytes(a.memory_cap as f64),
        describe::bytes(part.design.design.memory_bytes() as f64),
        threads,
        part.vcpus,
        describe::count(part.iops),
        describe::count(part.mibps),
        describe::duration(part.read_latency_us * 1e-6),
    );
    if data_bytes(model) < DATA_OVER_CAP * a.memory_cap as f64 {
        println!(
            "  note: the data is {:.1}x the memory cap, under {DATA_OVER_CAP}x: much of it may stay in memory, and reads not reach the disk the search prices",
            data_bytes(model) / a.memory_cap as f64
        );
    }
    if report["memory_enforced"] == json!(false) {
        println!(
            "  note: the memory cap was NOT enforced (no memory cgroup could be made here; cosine-peers said why above): the engines ran with the machine's memory, so the measured numbers may beat the priced ones"
        );
    }
    println!(
        "\n  {:<70} {:>11} {:>11} {:>7}   {:>9} {:>9} {:>7}   bound",
        "design", "priced/s", "measured/s", "ratio", "priced IO", "meas. IO", "ratio"
    );
    for c in checked.iter().chain(rocksdb) {
        let priced = priced_ops(&c.priced, model);
        let (m, io) = match c.measured {
            Some((m, io)) => (
                describe::count(m),
                io.map_or("-".into(), |x| format!("{x:.3}")),
            ),
            None => ("-".into(), "-".into()),
        };
        let ratio = c
            .measured
            .map_or("-".into(), |x| format!("{:.2}", x.0 / priced));
        let io_ratio = c
            .measured
            .and_then(|x| x.1)
            .map_or("-".into(), |x| format!("{:.2}", x / c.priced.io_per_op));
        println!(
            "  {:<70} {:>11} {:>11} {:>7}   {:>9.3} {:>9} {:>7}   {}",
            c.label,
            describe::count(priced),
            m,
            ratio,
            c.priced.io_per_op,
            io,
            io_ratio,
            c.priced.delivered.map_or("-", |d| d.bound.as_str())
        );
    }
    if let Some(x) = report["pick_over_best_of_designs"].as_f64() {
        println!(
            "\n  the pick ran at {x:.2}x the fastest of the {} designs measured (goal: at least 0.9)",
            checked.len()
        );
    }
    if let Some(r) = report["cosine_over_rocksdb"].as_object() {
        println!(
            "  Cosine / RocksDB: predicted {:.2}, measured {} (goal: within 25%)",
            r["predicted"].as_f64().unwrap_or(f64::NAN),
            r["measured"]
                .as_f64()
                .map_or("-".into(), |m| format!("{m:.2}"))
        );
    }
    // (the pick's merge cycles where the model finds them, else the flushes of the design that writes fewest)
    let share = model.mix.writes() + model.mix.rmw;
    let pick = checked
        .first()
        .and_then(|c| timed_cycles(a, model, &c.priced))
        .filter(|(n, _)| *n < STEADY_CYCLES && share > 0.0);
    let flushes = checked
        .iter()
        .map(|c| timed_flushes(a, model, &c.priced))
        .fold(f64::INFINITY, f64::min);
    if let Some((n, cycle)) = pick {
        println!(
            "  note: the pick's timed run holds {n:.1} cycles of its biggest merges, those into its deepest level (one per {} writes): a run that short meets those merges or not by where it falls in the cycle, so its measured I/Os swing about the cycle's mean priced; --ops {} holds {STEADY_CYCLES} whole cycles (--warmup, default as many, can stay short)",
            describe::count(cycle),
            (STEADY_CYCLES * cycle / share).ceil() as u64
        );
    } else if flushes < STEADY_FLUSHES {
        println!(
            "  note: the timed run writes {flushes:.1}x a design's flush at least (under {STEADY_FLUSHES}x): its flushes and merges fall mostly outside it, so it measures less background work (I/Os and CPU) than the priced steady state; more --ops measure it"
        );
    }
    println!("  goals: measured throughput within ±25% of priced, I/Os an operation within ±15%");
}

//! `cosine bench`, `cosine validate` and `cosine calibrate`: the YCSB harness on the engine, the model's
//! accuracy against measured I/O, and Algorithm 1's φ.

use crate::ycsb_args::{load_workload, SyncArg};
use anyhow::{bail, Context, Result};
use clap::Parser;
use cosine_cost_model::cpu::PhiLibrary;
use cosine_engine::SyncMode;
use cosine_validate::{run_bench, searched_design, NoProgress, Progress, RunSpec};
use cosine_ycsb::PhaseReport;
use std::io::IsTerminal;
use std::sync::atomic::{AtomicU64, Ordering};

/// Arguments of `cosine bench`.
#[derive(Parser, Debug)]
pub struct BenchArgs {
    /// A YCSB core workload: ycsb-a … ycsb-f.
    #[arg(long, default_value = "ycsb-a")]
    workload: String,
    /// A YCSB property file (e.g. YCSB's workloads/workloada) instead of a name.
    #[arg(long)]
    workload_file: Option<String>,
    /// Records loaded.
    #[arg(long, default_value_t = 100_000)]
    records: u64,
    /// Operations in the run phase.
    #[arg(long, default_value_t = 100_000)]
    ops: u64,
    /// Client threads.
    #[arg(long, default_value_t = 2)]
    threads: usize,
    /// Engine: cosine (peer engines come with the `peers` build of the bench crate).
    #[arg(long, default_value = "cosine")]
    engine: String,
    /// design.json to run; by default the design Cosine's search picks for this workload and memory.
    #[arg(long)]
    design: Option<String>,
    /// Memory budget for the engine in bytes (buffer + filters + fences) when the search picks the design.
    #[arg(long, default_value_t = 64 << 20)]
    memory: u64,
    /// Log sync mode.
    #[arg(long, value_enum, default_value_t = SyncArg::Never)]
    sync: SyncArg,
    /// The design's background merge threads (`threads` in design.json: one compaction's merge is cut into
    /// that many key ranges merged side by side; 0 = one per core). Default: the design's own value.
    #[arg(long)]
    engine_threads: Option<u32>,
    /// Data directory (default: a temporary one, removed afterwards).
    #[arg(long)]
    data: Option<String>,
    /// Seed of the request generators.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Write the design the run uses (the search's pick for the workload and --memory, or --design's) to this
    /// file as design.json, before the run starts.
    #[arg(long, value_name = "FILE")]
    design_out: Option<String>,
    /// Print one JSON document.
    #[arg(long)]
    json: bool,
}

/// A progress bar on stderr for each phase (drawn only when stderr is a terminal).
pub(crate) struct Bar;

impl Progress for Bar {
    fn phase(
        &self,
        label: &str,
        total: u64,
        run: &mut dyn FnMut(Option<&AtomicU64>) -> PhaseReport,
    ) -> PhaseReport {
        phase_with_progress(label, total, run)
    }
}

fn phase_with_progress(
    label: &str,
    total: u64,
    run: &mut dyn FnMut(Option<&AtomicU64>) -> PhaseReport,
) -> PhaseReport {
    if !std::io::stderr().is_terminal() {
        return run(None);
    }
    let done = AtomicU64::new(0);
    let finished = std::sync::atomic::AtomicBool::new(false);
    let bar = indicatif::ProgressBar::with_draw_target(
        Some(total),
        indicatif::ProgressDrawTarget::stderr(),
    );
    bar.set_style(
        indicatif::ProgressStyle::with_template(
            "{msg:>5} [{bar:40}] {pos}/{len} ops, {elapsed} elapsed, eta {eta}",
        )
        .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar())
        .progress_chars("=> "),
    );
    bar.set_message(label.to_string());
    let report = std::thread::scope(|s| {
        s.spawn(|| {
            while !finished.load(Ordering::Relaxed) {
                bar.set_position(done.load(Ordering::Relaxed));
                std::thread::sleep(std::time::Duration::from_millis(100));
            }
        });
        let r = run(Some(&done));
        finished.store(true, Ordering::Relaxed);
        r
    });
    bar.finish_and_clear();
    report
}

/// Runs `cosine bench`.
pub fn bench(a: BenchArgs) -> Result<()> {
    if a.engine != "cosine" {
        bail!("engine '{}' is not in this build: peer engines (rocksdb, wiredtiger, fjall, redb, sled) are built with the bench crate's `peers` feature", a.engine);
    }
    if a.threads == 0 {
        bail!("--threads must be at least 1");
    }
    let w = load_workload(&a.workload, a.workload_file.as_deref(), a.records, a.ops)?;
    let phi = PhiLibrary::default();
    let mut design = match &a.design {
        Some(p) => cosine_design::load_design(p).with_context(|| format!("design {p}"))?,
        None => searched_design(&w, a.memory, &phi)?,
    };
    if let Some(t) = a.engine_threads {
        design.threads = t;
    }
    if let Some(out) = &a.design_out {
        std::fs::write(out, serde_json::to_string_pretty(&design)? + "\n")
            .with_context(|| format!("--design-out {out}"))?;
    }
    let sync = SyncMode::from(a.sync);
    let tmp;
    let dir = match &a.data {
        Some(d) => std::path::PathBuf::from(d),
        None => {
            tmp = std::env::temp_dir().join(format!("cosine-bench-{}", std::process::id()));
            tmp.clone()
        }
    };
    let r = run_bench(
        &design,
        &w,
        &dir,
        RunSpec {
            threads: a.threads,
            sync,
            seed: a.seed,
            warm_up_writes: 0,
            slices: 1,
            // a timed run: the client writes as fast as the engine takes it
            pace: None,
            progress: if a.json { &NoProgress } else { &Bar },
        },
    )?;
    if a.data.is_none() {
        let _ = std::fs::remove_dir_all(&dir);
    }
    if a.json {
        let v = serde_json::json!({
            "workload": w, "engine": "cosine", "design": design, "threads": a.threads,
            "load": r.load, "run": r.run,
            "write_amplification": r.stats.write_amplification, "space_amplification": r.stats.space_amplification,
            "disk_bytes": r.stats.disk_bytes, "resident_bytes": r.rss, "peak_resident_bytes": r.peak_rss,
            "levels": r.stats.levels.iter().map(level_json).collect::<Vec<_>>(),
            "cache": {
                "bytes": r.stats.memory.cache_bytes, "budget_bytes": r.stats.memory.cache_budget_bytes,
                "hits": r.stats.cache.hits, "misses": r.stats.cache.misses,
                "fills": r.stats.cache.fills, "refused": r.stats.cache.refused,
            },
        });
        println!("{}", serde_json::to_string_pretty(&v)?);
        return Ok(());
    }
    println!(
        "cosine bench: {} ({} records of {} B, {} operations, {} threads), design {} T={} K={} Z={} M_B={} M_BF={} M_FP={} M_BC={} threads={}",
        w.name, w.record_count, w.value_bytes(), w.operation_count, a.threads,
        design.class.map_or("?".to_string(), |c| c.to_string()), design.size_ratio, design.hot_runs, design.cold_runs,
        design.buffer_bytes, design.filter_bytes, design.fence_bytes, design.cache_bytes, design.threads
    );
    println!(
        "load: {:.0} ops/s ({:.2} s)",
        r.load.throughput, r.load.seconds
    );
    println!(
        "run:  {:.0} ops/s ({:.2} s), {} errors, {} wrong results (every read and scan checked)",
        r.run.throughput, r.run.seconds, r.run.errors, r.run.wrong
    );
    for (name, o) in &r.run.ops {
        let reads = o
            .read_ios
            .map_or(String::new(), |r| format!("   {r:.3} block reads/op"));
        println!(
            "  {name:<7} {:>9} ops   p50 {:>7.0} µs   p95 {:>7.0} µs   p99 {:>7.0} µs{reads}",
            o.count, o.p50_us, o.p95_us, o.p99_us
        );
    }
    println!(
        "I/Os per operation: {:.3} block reads on the read path, {:.3} flush/compaction block reads and writes",
        r.run.read_ios_per_op.unwrap_or(0.0),
        r.run.background_ios_per_op.unwrap_or(0.0)
    );
    println!("level  runs  files      MiB    entries     fences   block reads  index reads  filter probes  false pos.");
    for l in &r.stats.levels {
        println!(
            "{:>5} {:>5} {:>6} {:>8.1} {:>10} {:>10} {:>13} {:>12} {:>14} {:>11}",
            l.level,
            l.runs,
            l.files,
            l.bytes as f64 / (1u64 << 20) as f64,
            l.entries,
            match l.resident_runs {
                n if n >= l.runs => "memory".to_string(),
                0 => "disk".to_string(),
                n => format!("{n}/{} mem", l.runs),
            },
            l.io.block_reads,
            l.io.index_reads,
            l.io.filter_probes,
            l.io.false_positives
        );
    }
    let m = &r.stats.memory;
    let mib = |b: f64| b / 1048576.0;
    println!(
        "engine memory at the end: buffers {:.1} of M_B {:.1} MiB, filters {:.1} of M_BF {:.1} MiB, fences and indexes {:.1} of M_FP {:.1} MiB",
        mib(m.buffer_bytes as f64),
        mib(m.buffer_budget_bytes as f64),
        mib(m.filter_bytes as f64),
        mib(m.filter_budget_bytes as f64),
        mib(m.fence_bytes as f64),
        mib(m.fence_budget_bytes as f64)
    );
    if m.cache_budget_bytes > 0 {
        let c = &r.stats.cache;
        println!(
            "entry cache: {:.1} of M_BC {:.1} MiB, {} hits, {} misses ({:.1}% hit), {} fills, {} refused after a racing write",
            mib(m.cache_bytes as f64),
            mib(m.cache_budget_bytes as f64),
            c.hits,
            c.misses,
            100.0 * c.hits as f64 / (c.hits + c.misses).max(1) as f64,
            c.fills,
            c.refused
        );
    }
    println!(
        "write amplification {:.2}, space amplification {:.2}, {} bytes on disk",
        r.stats.write_amplification, r.stats.space_amplification, r.stats.disk_bytes
    );
    println!(
        "process memory: peak resident {} MiB, resident now {} MiB, design memory {:.1} MiB",
        r.peak_rss.unwrap_or(0) >> 20,
        r.rss.unwrap_or(0) >> 20,
        m.budget_bytes as f64 / 1048576.0
    );
    Ok(())
}

fn level_json(l: &cosine_engine::LevelStats) -> serde_json::Value {
    serde_json::json!({
        "level": l.level, "runs": l.runs, "files": l.files, "bytes": l.bytes, "entries": l.entries, "hot": l.hot, "resident_runs": l.resident_runs,
        "block_reads": l.io.block_reads, "index_reads": l.io.index_reads, "block_writes": l.io.block_writes,
        "filter_probes": l.io.filter_probes, "filter_negatives": l.io.filter_negatives,
        "false_positives": l.io.false_positives, "compaction_reads": l.io.compaction_reads,
    })
}

/// The four design classes at test scale, for calibration and validation.
/// Arguments of `cosine calibrate`.
#[derive(Parser, Debug)]
pub struct CalibrateArgs {
    /// Smaller data and fewer operations (seconds instead of minutes).
    #[arg(long)]
    quick: bool,
    /// Where to write the φ library (JSON).
    #[arg(long, default_value = "phi.json")]
    out: String,
    /// Most cores to use (default: all).
    #[arg(long)]
    cores: Option<usize>,
    /// Records per measurement (overrides the quick/full default).
    #[arg(long)]
    records: Option<u64>,
    /// Operations per measurement (overrides the quick/full default).
    #[arg(long)]
    ops: Option<u64>,
    /// Also draw the φ table as an SVG bar chart.
    #[arg(long)]
    plot: Option<String>,
}

/// Runs Algorithm 1: per class and operation type, time the same operations on 1..η threads, invert Eq. 2.
pub fn calibrate(a: CalibrateArgs) -> Result<()> {
    let eta = a
        .cores
        .unwrap_or_else(|| {
            std::thread::available_parallelism()
                .map(|n| n.get())
                .unwrap_or(1)
        })
        .max(1);
    if eta < 2 {
        bail!("calibration needs at least 2 cores to observe a speedup");
    }
    let (records, ops) = if a.quick {
        (20_000u64, 20_000u64)
    } else {
        (200_000, 200_000)
    };
    let (records, ops) = (
        a.records.unwrap_or(records).max(100),
        a.ops.unwrap_or(ops).max(100),
    );
    let started = std::time::Instant::now();
    println!("Algorithm 1 on this machine ({eta} cores, {records} records, {ops} operations per measurement)");
    let mut lib = cosine_validate::calibrate_engine(records, ops, eta, |class, op, phi| {
        println!("{}", cosine_ycsb::phi_line(class, op, phi));
    })?;
    lib.machine = format!(
        "{} cores, {} GiB; cosine calibrate{} on {} (Algorithm 1: phi from the speedup of 1..{eta} threads)",
        eta,
        std::fs::read_to_string("/proc/meminfo").ok().and_then(|m| m.lines().next().and_then(|l| l.split_whitespace().nth(1)).and_then(|k| k.parse::<u64>().ok())).map_or(0, |kb| kb >> 20),
        if a.quick { " --quick" } else { "" },
        std::env::consts::ARCH
    );
    std::fs::write(&a.out, serde_json::to_string_pretty(&lib)? + "\n")
        .with_context(|| format!("writing {}", a.out))?;
    if let Some(plot) = &a.plot {
        let ops = ["lookup", "insert", "blind_update", "rmw", "range"];
        let series: Vec<(String, Vec<f64>)> = ["lsm", "btree", "lsh", "hybrid"]
            .iter()
            .filter_map(|c| {
                lib.entries.get(*c).map(|e| {
                    (
                        c.to_string(),
                        vec![e.lookup, e.insert, e.blind_update, e.rmw, e.range],
                    )
                })
            })
            .collect();
        crate::plot::write_bars(
            plot,
            &format!("φ per operation type ({eta} cores)"),
            "φ (Amdahl parallel fraction)",
            &ops.map(String::from),
            &series,
            0.0..1.3,
        )?;
        println!("wrote {plot}");
    }
    println!(
        "wrote {} in {:.1} s",
        a.out,
        started.elapsed().as_secs_f64()
    );
    Ok(())
}

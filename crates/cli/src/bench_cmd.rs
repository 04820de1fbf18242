//! `cosine bench`, `cosine validate` and `cosine calibrate`: the YCSB harness on the engine, the model's
//! accuracy against measured I/O, and Algorithm 1's φ.

use anyhow::{anyhow, bail, Context, Result};
use clap::{Parser, ValueEnum};
use cosine_cost_model::cpu::PhiLibrary;
use cosine_design::{Design, DesignClass};
use cosine_engine::{Engine, Options, SyncMode};
use cosine_ycsb::{
    parse_properties, run_phase, CalibrationStage, CoreWorkload, CosineStore, PhaseReport, Store,
};
use std::io::IsTerminal;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

#[derive(Clone, Copy, Debug, ValueEnum, PartialEq, Eq)]
enum SyncArg {
    Always,
    Batch,
    Never,
}

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
    /// Print one JSON document.
    #[arg(long)]
    json: bool,
}

pub(crate) fn load_workload(
    name: &str,
    file: Option<&str>,
    records: u64,
    ops: u64,
) -> Result<CoreWorkload> {
    let mut w = match file {
        Some(path) => {
            let text =
                std::fs::read_to_string(path).with_context(|| format!("cannot read {path}"))?;
            let mut w = CoreWorkload::defaults(path);
            w.apply(&parse_properties(&text)?)?;
            w
        }
        None => CoreWorkload::named(name).ok_or_else(|| {
            anyhow!("unknown YCSB workload '{name}' (ycsb-a … ycsb-f, or --workload-file)")
        })?,
    };
    if records == 0 || ops == 0 {
        bail!("--records and --ops must be positive");
    }
    w.record_count = records;
    w.operation_count = ops;
    w.validate()?;
    Ok(w)
}

/// The design Cosine's search picks for a workload on one machine with `memory` bytes for the engine.
pub fn searched_design(w: &CoreWorkload, memory: u64, phi: &PhiLibrary) -> Result<Design> {
    let cores = std::thread::available_parallelism()
        .map(|n| n.get() as u32)
        .unwrap_or(1);
    cosine_search::designs::best_for_machine(&w.to_model(), memory, cores, phi)
        .ok_or_else(|| anyhow!("no design fits {memory} bytes"))
}

pub(crate) struct Run {
    pub(crate) load: PhaseReport,
    pub(crate) run: PhaseReport,
    pub(crate) stats: cosine_engine::Stats,
    /// Resident bytes at the end.
    pub(crate) rss: Option<u64>,
    /// Peak resident bytes of the process over load and run.
    pub(crate) peak_rss: Option<u64>,
    /// Flush and compaction I/Os per write over the warm-up and the run.
    pub(crate) background_per_write: Option<f64>,
    /// Writes (updates, inserts, read-modify-writes) in the run.
    pub(crate) run_writes: u64,
}

/// Runs one phase with a progress bar on stderr (drawn only when stderr is a terminal; `show` false hides it).
fn phase_with_progress(
    show: bool,
    label: &str,
    total: u64,
    run: impl FnOnce(Option<&AtomicU64>) -> PhaseReport + Send,
) -> PhaseReport {
    if !show || !std::io::stderr().is_terminal() {
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

/// How one engine run is driven.
pub(crate) struct RunSpec {
    pub(crate) threads: usize,
    pub(crate) sync: SyncMode,
    pub(crate) seed: u64,
    /// Unmeasured writes of the workload between load and run (validate's steady state).
    pub(crate) warm_up_writes: u64,
    /// Slices the warm-up and the run are cut into and interleaved (warm-up slice, run slice, ...), so that
    /// the measured operations meet the tree at that many points of its merge cycle rather than one.
    pub(crate) slices: u64,
    pub(crate) show_progress: bool,
}

/// Fails on a phase in which the engine returned a wrong result (every read and scan is checked).
fn wrong_results(r: &PhaseReport) -> Result<()> {
    match &r.first_wrong {
        Some(why) => bail!("{} wrong results; the first: {why}", r.wrong),
        None => Ok(()),
    }
}

pub(crate) fn run_bench(
    design: &Design,
    w: &CoreWorkload,
    dir: &std::path::Path,
    spec: RunSpec,
) -> Result<Run> {
    let RunSpec {
        threads,
        sync,
        seed,
        warm_up_writes,
        slices,
        show_progress,
    } = spec;
    let engine = Arc::new(Engine::open_with(dir, design, Options::with_sync(sync))?);
    let store = CosineStore(engine.clone());
    let ledger = cosine_ycsb::Ledger::default();
    let load = phase_with_progress(show_progress, "load", w.record_count, |p| {
        run_phase(&store, &ledger, w, threads, true, seed, p)
    });
    wrong_results(&load)?;
    store.settle().map_err(|e| anyhow!(e))?;
    let before = store.io();
    let mut measured = w.clone();
    let writes = w.update + w.insert + w.read_modify_write;
    let slices = slices.clamp(1, w.operation_count.max(1));
    let mut run: Option<PhaseReport> = None;
    // half the warm-up before the first slice, the other half spread between the slices
    let spread = if slices > 1 { warm_up_writes / 2 } else { 0 };
    for i in 0..slices {
        let share = |total: u64| total / slices + u64::from(i < total % slices);
        let warm_writes = share(spread) + if i == 0 { warm_up_writes - spread } else { 0 };
        if warm_writes > 0 && writes > 0.0 {
            // the workload's writes alone (reads do not change the tree), unmeasured, so that the buffer and
            // the upper levels hold what the workload itself writes (the model's steady state), not the
            // load's tail
            let mut warm = measured.clone();
            (warm.read, warm.scan, warm.read_modify_write) = (0.0, 0.0, 0.0);
            warm.update = (w.update + w.read_modify_write) / writes;
            warm.insert = w.insert / writes;
            warm.operation_count = warm_writes;
            let r = run_phase(
                &store,
                &ledger,
                &warm,
                threads,
                false,
                seed + 2 + 10 * i,
                None,
            );
            wrong_results(&r)?;
            measured.inserted_before += r.inserted;
            // the warm-up writes as fast as it can, unlike the workload it stands for: let compaction catch
            // up (the active buffer stays as it is), so a slice meets the design's shape, not a backlog of
            // level-1 runs that the run's own write rate would not have left
            engine.wait_for_compactions()?;
        }
        let mut slice = measured.clone();
        slice.operation_count = share(w.operation_count);
        let label = if slices > 1 {
            format!("run {}/{slices}", i + 1)
        } else {
            "run".into()
        };
        let r = phase_with_progress(show_progress, &label, slice.operation_count, |p| {
            run_phase(
                &store,
                &ledger,
                &slice,
                threads,
                false,
                seed + 1 + 10 * i,
                p,
            )
        });
        wrong_results(&r)?;
        measured.inserted_before += r.inserted;
        match &mut run {
            Some(all) => all.absorb(r),
            None => run = Some(r),
        }
    }
    let run = run.ok_or_else(|| anyhow!("the run has no operations"))?;
    // flush and compaction I/O per write over the warm-up and the run together, including the compactions
    // still owed at the end (settled): a writer that outruns compaction defers merges, it does not avoid them
    store.settle().map_err(|e| anyhow!(e))?;
    let run_writes: u64 = run
        .ops
        .iter()
        .filter(|(n, _)| n == "update" || n == "insert" || n == "rmw")
        .map(|(_, o)| o.count)
        .sum();
    let background_per_write = match (before, store.io()) {
        (Some(a), Some(b)) if warm_up_writes + run_writes > 0 => {
            Some((b.background - a.background) as f64 / (warm_up_writes + run_writes) as f64)
        }
        _ => None,
    };
    let stats = engine.stats();
    Ok(Run {
        load,
        run,
        background_per_write,
        run_writes,
        stats,
        rss: cosine_ycsb::resident_bytes(),
        peak_rss: cosine_ycsb::peak_resident_bytes(),
    })
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
    let sync = match a.sync {
        SyncArg::Always => SyncMode::Always,
        SyncArg::Batch => SyncMode::Batch,
        SyncArg::Never => SyncMode::Never,
    };
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
            show_progress: !a.json,
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
        });
        println!("{}", serde_json::to_string_pretty(&v)?);
        return Ok(());
    }
    println!(
        "cosine bench: {} ({} records of {} B, {} operations, {} threads), design {} T={} K={} Z={} M_B={} M_BF={} M_FP={} threads={}",
        w.name, w.record_count, w.value_bytes(), w.operation_count, a.threads,
        design.class.map_or("?".to_string(), |c| c.to_string()), design.size_ratio, design.hot_runs, design.cold_runs,
        design.buffer_bytes, design.filter_bytes, design.fence_bytes, design.threads
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
pub(crate) fn class_designs(memory: u64) -> Vec<(DesignClass, Design)> {
    let mut lsm = Design::rocksdb_like(memory / 4, memory / 4, memory / 2);
    lsm.block_bytes = 4096;
    lsm.file_bytes = 4 << 20;
    let mut btree = Design::wiredtiger_like(memory / 2, memory / 64);
    btree.block_bytes = 32 * 1024;
    btree.size_ratio = 16;
    let lsh = Design::lsh_like(memory / 2, memory / 2);
    let hybrid = Design::hybrid(6, memory / 4, memory / 4, memory / 64);
    vec![
        (DesignClass::Lsm, lsm),
        (DesignClass::Btree, btree),
        (DesignClass::Lsh, lsh),
        (DesignClass::Hybrid, hybrid),
    ]
}

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
    // the systems keep the authors' values until `cosine-peers --calibrate-phi` measures them
    let mut lib = PhiLibrary::paper();
    lib.entries
        .retain(|k, _| !["lsm", "btree", "lsh", "hybrid"].contains(&k.as_str()));
    println!("Algorithm 1 on this machine ({eta} cores, {records} records, {ops} operations per measurement)");
    for (class, design) in class_designs(16 << 20) {
        let dir_of = |op: &str| {
            std::env::temp_dir().join(format!(
                "cosine-calibrate-{}-{class}-{op}",
                std::process::id()
            ))
        };
        let phis = cosine_ycsb::calibrate(
            records,
            ops,
            eta,
            |op, _, stage| {
                // the timings reopen the loaded tree with a buffer that holds every timed write
                let mut design = design.clone();
                if let CalibrationStage::Time { write_room } = stage {
                    design.buffer_bytes = design.buffer_bytes.max(write_room);
                }
                let engine =
                    Engine::open_with(dir_of(op), &design, Options::with_sync(SyncMode::Never))
                        .map_err(|e| e.to_string())?;
                Ok(Box::new(CosineStore(Arc::new(engine))) as Box<dyn Store>)
            },
            |op, phi| {
                let _ = std::fs::remove_dir_all(dir_of(op));
                println!("{}", cosine_ycsb::phi_line(class.as_str(), op, phi));
            },
        )
        .map_err(|e| anyhow!(e))?;
        cosine_ycsb::record_phi(&mut lib, class.as_str(), &phis);
    }
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

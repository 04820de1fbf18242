//! `cosine-peers`: YCSB A-F on our engine and on peer engines, all in one run on one machine with the same
//! memory budget, printed as the BENCHMARKS.md table.
//!
//! `cargo run --release -p cosine-peers --features peers -- --records 1000000 --ops 500000`
//! (RocksDB links Debian's librocksdb-dev 7.8.3: `ROCKSDB_LIB_DIR=/usr/lib/x86_64-linux-gnu`).
//! Without the `peers` feature only the Cosine engine is available.

mod adapters;

use anyhow::{bail, Result};
use clap::Parser;
use cosine_cost_model::cpu::PhiLibrary;
use cosine_engine::{Engine, Options, SyncMode};
use cosine_ycsb::{run_phase, CalibrationStage, CoreWorkload, CosineStore, Store};
use std::sync::Arc;

/// Arguments.
#[derive(Parser, Debug)]
#[command(
    name = "cosine-peers",
    about = "YCSB A-F on Cosine and peer engines with the same memory"
)]
struct Args {
    /// Engines, comma-separated: cosine, rocksdb, rocksdb-cosine (RocksDB with the leveled LSM parameters
    /// Cosine's search picks), fjall, redb, sled, wiredtiger, wiredtiger-lsm.
    #[arg(
        long,
        default_value = "cosine,rocksdb,rocksdb-cosine,wiredtiger,wiredtiger-lsm,fjall,redb,sled"
    )]
    engines: String,
    /// YCSB workloads, comma-separated.
    #[arg(long, default_value = "ycsb-a,ycsb-b,ycsb-c,ycsb-d,ycsb-e,ycsb-f")]
    workloads: String,
    /// Records loaded.
    #[arg(long, default_value_t = 1_000_000)]
    records: u64,
    /// Operations per workload.
    #[arg(long, default_value_t = 200_000)]
    ops: u64,
    /// Client threads.
    #[arg(long, default_value_t = 2)]
    threads: usize,
    /// Memory for each engine's caches and buffers, bytes.
    #[arg(long, default_value_t = 64 << 20)]
    memory: u64,
    /// Where the databases live.
    #[arg(long, default_value = "/tmp/cosine-peers")]
    dir: String,
    /// Print JSON rows instead of the table.
    #[arg(long)]
    json: bool,
    /// Instead of the table: run Algorithm 1 (1 and 2..=cores threads per operation type) on each peer named
    /// in --engines that is a fixed system of the φ library (rocksdb, wiredtiger), add their entries to the
    /// library read from --phi-base, and write it here.
    #[arg(long)]
    calibrate_phi: Option<String>,
    /// The φ library the calibrated peers are added to (default: the learned library shipped in the crate).
    #[arg(long)]
    phi_base: Option<String>,
}

/// Algorithm 1 on the peers: their φ entries, added to a φ library.
fn calibrate_peers(a: &Args, engines: &[String], out: &str) -> Result<()> {
    let mut lib = match &a.phi_base {
        Some(p) => PhiLibrary::named_or_file(p)?,
        None => PhiLibrary::learned(),
    };
    let eta = (machine_cores() as usize).max(2);
    let started = std::time::Instant::now();
    for e in engines
        .iter()
        .filter(|e| *e == "rocksdb" || *e == "wiredtiger")
    {
        let dir_of = |op: &str| std::path::Path::new(&a.dir).join(format!("phi-{e}-{op}"));
        let phis = cosine_ycsb::calibrate(
            a.records,
            a.ops,
            eta,
            |op, w, stage| {
                let dir = dir_of(op);
                let memory = match stage {
                    CalibrationStage::Load => {
                        let _ = std::fs::remove_dir_all(&dir);
                        std::fs::create_dir_all(&dir).map_err(|x| x.to_string())?;
                        a.memory
                    }
                    // the timings reopen the loaded store with room for every timed write in its write
                    // buffer (RocksDB's is a quarter of the budget; WiredTiger's cache is all of it)
                    CalibrationStage::Time { write_room } => a.memory.max(4 * write_room),
                };
                open(e, w, memory, &dir).map_err(|x| x.to_string())
            },
            |op, phi| {
                let _ = std::fs::remove_dir_all(dir_of(op));
                eprintln!("  {e:<10} {op:<13} phi {phi:.3}");
            },
        )
        .map_err(|x| anyhow::anyhow!(x))?;
        lib.entries
            .insert(e.clone(), cosine_cost_model::cpu::PhiEntry::from_ops(phis));
        lib.machine = format!(
            "{}; {e} by cosine-peers --calibrate-phi ({} records, {} operations per measurement)",
            lib.machine, a.records, a.ops
        );
    }
    std::fs::write(out, serde_json::to_string_pretty(&lib)? + "\n")?;
    eprintln!("wrote {out} in {:.0} s", started.elapsed().as_secs_f64());
    Ok(())
}

/// Cores of this machine: the η the search designs for and the most threads Algorithm 1 times.
fn machine_cores() -> u32 {
    std::thread::available_parallelism().map_or(1, |n| n.get() as u32)
}

fn open(
    engine: &str,
    w: &CoreWorkload,
    memory: u64,
    dir: &std::path::Path,
) -> Result<Box<dyn Store>> {
    Ok(match engine {
        "cosine" => {
            let design = cosine_search::designs::best_for_machine(
                &w.to_model(),
                memory,
                machine_cores(),
                &PhiLibrary::default(),
            )
            .ok_or_else(|| anyhow::anyhow!("no design for {memory} bytes"))?;
            Box::new(CosineStore(Arc::new(Engine::open_with(
                dir,
                &design,
                Options::with_sync(SyncMode::Never),
            )?)))
        }
        "rocksdb-cosine" => {
            let design = cosine_search::designs::best_leveled_lsm_for_machine(
                &w.to_model(),
                memory,
                machine_cores(),
                &PhiLibrary::default(),
            )
            .ok_or_else(|| anyhow::anyhow!("no leveled LSM design for {memory} bytes"))?;
            eprintln!(
                "rocksdb-cosine: T={} M_B={} M_BF={} M_FP={}",
                design.size_ratio, design.buffer_bytes, design.filter_bytes, design.fence_bytes
            );
            adapters::open_rocksdb_tuned(&design, w.record_count, memory, dir)?
        }
        other => adapters::open(other, memory, dir)?,
    })
}

fn main() -> Result<()> {
    let a = Args::parse();
    let engines: Vec<String> = a
        .engines
        .split(',')
        .map(|s| s.trim().to_string())
        .filter(|s| !s.is_empty())
        .collect();
    for e in &engines {
        let tuned_rocks = e == "rocksdb-cosine" && adapters::AVAILABLE.contains(&"rocksdb");
        if e != "cosine" && !tuned_rocks && !adapters::AVAILABLE.contains(&e.as_str()) {
            bail!(
                "engine '{e}' is not in this build (available: cosine{}{})",
                if adapters::AVAILABLE.is_empty() {
                    ""
                } else {
                    ", "
                },
                adapters::AVAILABLE.join(", ")
            );
        }
    }
    if let Some(out) = &a.calibrate_phi {
        return calibrate_peers(&a, &engines, out);
    }
    let mut rows = Vec::new();
    for wname in a
        .workloads
        .split(',')
        .map(str::trim)
        .filter(|s| !s.is_empty())
    {
        let mut w = CoreWorkload::named(wname)
            .ok_or_else(|| anyhow::anyhow!("unknown workload {wname}"))?;
        w.record_count = a.records;
        w.operation_count = a.ops;
        for e in &engines {
            let dir = std::path::Path::new(&a.dir).join(format!("{e}-{}", w.name));
            let _ = std::fs::remove_dir_all(&dir);
            std::fs::create_dir_all(&dir)?;
            let store = open(e, &w, a.memory, &dir)?;
            let load = run_phase(store.as_ref(), &w, a.threads, true, 1, None);
            store.settle().map_err(|x| anyhow::anyhow!(x))?;
            let run = run_phase(store.as_ref(), &w, a.threads, false, 2, None);
            let p99 = run.ops.iter().map(|o| o.1.p99_us).fold(0.0, f64::max);
            eprintln!("{:<8} {:<7} load {:>9.0} ops/s   run {:>9.0} ops/s   worst p99 {:>7.0} µs   errors {}", w.name, e, load.throughput, run.throughput, p99, run.errors);
            rows.push(serde_json::json!({"workload": w.name, "engine": e, "load": load.throughput, "run": run.throughput, "p99_us": p99, "errors": run.errors, "read_ios_per_op": run.read_ios_per_op}));
            drop(store);
            let _ = std::fs::remove_dir_all(&dir);
        }
    }
    if a.json {
        println!("{}", serde_json::to_string_pretty(&rows)?);
        return Ok(());
    }
    println!(
        "| workload | {} |",
        engines
            .iter()
            .map(|e| format!("{e} ops/s"))
            .collect::<Vec<_>>()
            .join(" | ")
    );
    println!("| --- |{}", " --- |".repeat(engines.len()));
    for wname in a
        .workloads
        .split(',')
        .map(str::trim)
        .filter(|s| !s.is_empty())
    {
        let name = CoreWorkload::named(wname)
            .map(|w| w.name)
            .unwrap_or_default();
        let base = rows
            .iter()
            .find(|r| r["workload"] == name && r["engine"] == "rocksdb")
            .and_then(|r| r["run"].as_f64());
        let cells: Vec<String> = engines
            .iter()
            .map(|e| {
                let t = rows
                    .iter()
                    .find(|r| r["workload"] == name && r["engine"] == e.as_str())
                    .and_then(|r| r["run"].as_f64())
                    .unwrap_or(f64::NAN);
                match base {
                    Some(b) if e != "rocksdb" => format!("{t:.0} ({:.2}×)", t / b),
                    _ => format!("{t:.0}"),
                }
            })
            .collect();
        println!("| {name} | {} |", cells.join(" | "));
    }
    Ok(())
}

//! `cosine-peers`: YCSB A-F on our engine and on peer engines, all in one run on one machine with the same
//! memory budget, printed as the BENCHMARKS.md table.
//!
//! `cargo run --release -p cosine-peers --features peers -- --records 1000000 --ops 500000`
//! (RocksDB links Debian's librocksdb-dev 7.8.3: `ROCKSDB_LIB_DIR=/usr/lib/x86_64-linux-gnu`).
//! Without the `peers` feature only the Cosine engine is available.

use cosine_peers::{adapters, cgroup};

use anyhow::{anyhow, bail, Context, Result};
use clap::Parser;
use cosine_cost_model::cpu::PhiLibrary;
use cosine_design::LogKind;
use cosine_engine::{Engine, Options, SyncMode};
use cosine_ycsb::{run_phase, CalibrationStage, CoreWorkload, CosineStore, Ledger, Store};
use serde_json::{json, Value};
use std::sync::Arc;

/// The engines that are ours, each running a design the search picks.
const OURS: [&str; 4] = [
    "cosine",
    "cosine-leveled",
    "cosine-lsh",
    "cosine-lsh-append-only",
];

/// Arguments.
#[derive(Parser, Debug)]
#[command(
    name = "cosine-peers",
    about = "YCSB A-F on Cosine and peer engines with the same memory"
)]
struct Args {
    /// Engines, comma-separated: cosine, cosine-leveled (our engine with the leveled LSM design that
    /// rocksdb-cosine gets: the search's design against its best leveled one), cosine-lsh and
    /// cosine-lsh-append-only (our engine as a log-structured hash table, with FASTER's hybrid log or an
    /// append-only one: the shape to set beside faster), rocksdb, rocksdb-cosine
    /// (RocksDB with the leveled LSM parameters Cosine's search picks), fjall, redb, sled, wiredtiger (its
    /// B-tree with 8 KB leaf pages), wiredtiger-32k (the B-tree with WiredTiger's default 32 KB leaves),
    /// wiredtiger-lsm, faster (the `faster` feature; at least 224 MiB of --memory).
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
    /// in --engines that is a fixed system of the φ library (rocksdb, wiredtiger, faster), add their entries to the
    /// library read from --phi-base, and write it here. WiredTiger's entry is measured on wiredtiger-32k (the
    /// B-tree with its default 32 KB leaves, as the search's fixed WiredTiger design), whichever of wiredtiger
    /// and wiredtiger-32k is named.
    #[arg(long)]
    calibrate_phi: Option<String>,
    /// The φ library the calibrated peers are added to (default: the learned library shipped in the crate).
    #[arg(long)]
    phi_base: Option<String>,
    /// Runs of every (workload, engine) cell; the engine order is rotated from round to round, and the
    /// table shows the median and the spread.
    #[arg(long, default_value_t = 3)]
    rounds: usize,
    /// Runs every cell in a memory cgroup capped at this many bytes (page cache included), so that with the
    /// data at least 4× the cap, reads reach the device. Needs a writable cgroup file system (v1 or v2).
    #[arg(long)]
    memory_cap: Option<u64>,
    /// Every engine fsyncs every write (or group of concurrent writes) before acknowledging it. Default:
    /// every write handed to the OS, no fsync.
    #[arg(long)]
    durable: bool,
    /// glibc malloc arenas of every cell's process (`MALLOC_ARENA_MAX`), the same for every engine; 0 keeps
    /// glibc's default (8 per core). With its default, glibc gives each thread that allocates at once an arena
    /// of its own and returns little of their freed memory: WiredTiger with a 32 MiB cache reached 130 MiB of
    /// heap that way and was OOM-killed under a 128 MiB cap, and fits in 64-74 MiB with 1 or 2 arenas.
    #[arg(long, default_value_t = machine_cores() as usize)]
    malloc_arenas: usize,
    /// Operations of the workload run after the load has settled and before the timed run, verified like the
    /// run but not timed: every engine's caches (Cosine's entry cache, RocksDB's and WiredTiger's block
    /// caches, the page cache) start the run warm. The run continues after the warm-up's inserts, and every
    /// engine is settled again before it. Default: as many as --ops
    #[arg(long)]
    warmup: Option<u64>,
    /// Seconds a cell (load, settle and run of one engine on one workload) may take before it is stopped
    /// and reported as timed out.
    #[arg(long, default_value_t = 1800)]
    cell_timeout: u64,
    /// Instead of running the engines: for each workload, the floor no engine can go below under the memory
    /// cap (or --memory without one): the records a perfect cache of all those bytes holds, the most of the
    /// point reads it answers under the workload's request distribution, and the point reads an operation
    /// that reach the device even then.
    #[arg(long)]
    ceiling: bool,
    /// (internal) Run one cell, ENGINE:WORKLOAD:ROUND, in this process and print its JSON row.
    #[arg(long, hide = true)]
    cell: Option<String>,
    /// (internal) The cgroup directory the cell's process joins first.
    #[arg(long, hide = true)]
    cgroup: Option<String>,
}

/// Algorithm 1 on the peers: their φ entries, added to a φ library.
fn calibrate_peers(a: &Args, engines: &[String], out: &str) -> Result<()> {
    let mut lib = match &a.phi_base {
        Some(p) => PhiLibrary::named_or_file(p)?,
        None => PhiLibrary::learned(),
    };
    let eta = (machine_cores() as usize).max(2);
    let started = std::time::Instant::now();
    let (systems, notes) = phi_systems(engines);
    for n in &notes {
        eprintln!("{n}");
    }
    if systems.is_empty() {
        bail!(
            "--calibrate-phi: none of --engines is a fixed system of the φ library ({FIXED_NAMES})"
        );
    }
    for (lib_name, e) in systems {
        let dir_of = |op: &str| std::path::Path::new(&a.dir).join(format!("phi-{e}-{op}"));
        // FASTER has no ordered scan (its range entry keeps the base library's value, with a note), and cannot
        // run below its minimum memory
        let faster = e == "faster";
        let which: Vec<&str> = cosine_ycsb::CALIBRATION_OPS
            .iter()
            .copied()
            .filter(|op| !(faster && *op == "range"))
            .collect();
        let floor = if faster { FASTER_MIN_MEMORY } else { 0 };
        let phis = cosine_ycsb::calibrate_ops(
            a.records,
            a.ops,
            eta,
            &which,
            |op, w, stage| {
                let dir = dir_of(op);
                let memory = match stage {
                    CalibrationStage::Load => {
                        let _ = std::fs::remove_dir_all(&dir);
                        std::fs::create_dir_all(&dir).map_err(|x| x.to_string())?;
                        a.memory.max(floor)
                    }
                    // the timings reopen the loaded store with room for every timed write in its write
                    // buffer (RocksDB's is a quarter of the budget; WiredTiger's cache is all of it; FASTER's
                    // mutable log region most of it)
                    CalibrationStage::Time { write_room } => {
                        a.memory.max(4 * write_room).max(floor)
                    }
                };
                open(e, w, memory, &dir, a.durable).map_err(|x| x.to_string())
            },
            |op, phi| {
                let _ = std::fs::remove_dir_all(dir_of(op));
                eprintln!("{}", cosine_ycsb::phi_line(lib_name, op, phi));
            },
        )
        .map_err(|x| anyhow::anyhow!(x))?;
        cosine_ycsb::record_phi_partial(&mut lib, lib_name, &phis, "FASTER has no ordered scan");
        let provenance = format!(
            "{lib_name} by cosine-peers --calibrate-phi{} ({} records, {} operations per measurement{})",
            if e == lib_name {
                String::new()
            } else {
                format!(" on {e}")
            },
            a.records,
            a.ops,
            if faster && a.memory < floor {
                format!(", {} MiB: FASTER's minimum", floor >> 20)
            } else {
                String::new()
            }
        );
        lib.machine = with_provenance(&lib.machine, lib_name, &provenance);
    }
    std::fs::write(out, serde_json::to_string_pretty(&lib)? + "\n")?;
    eprintln!("wrote {out} in {:.0} s", started.elapsed().as_secs_f64());
    Ok(())
}

/// The φ library's fixed system an engine name of `--engines` calibrates, and the engine it is measured on:
/// the configuration the search's fixed design prices. The search's WiredTiger is WiredTiger's B-tree with its
/// default 32 KiB leaves (`Baseline::WiredTiger`, T = 32 ≤ the entries of a leaf), so its φ is measured on
/// `wiredtiger-32k`, whether `wiredtiger` (the benchmark's B-tree with 8 KB leaves) or `wiredtiger-32k` is
/// named. None for an engine that is not a fixed system (ours, fjall, redb, sled, the LSM table).
fn phi_system(engine: &str) -> Option<(&'static str, &'static str)> {
    match engine {
        "rocksdb" => Some(("rocksdb", "rocksdb")),
        "wiredtiger" | "wiredtiger-32k" => Some(("wiredtiger", "wiredtiger-32k")),
        "faster" => Some(("faster", "faster")),
        _ => None,
    }
}

/// The engine names `--calibrate-phi` takes, as its messages list them.
const FIXED_NAMES: &str = "rocksdb, wiredtiger or wiredtiger-32k, faster";

/// The fixed systems `--calibrate-phi` measures for `--engines`, each once, in the order named, as (the φ
/// library's name, the engine it is measured on); and a line for each name that was mapped to another engine
/// or skipped.
fn phi_systems(engines: &[String]) -> (Vec<(&'static str, &'static str)>, Vec<String>) {
    let mut systems = Vec::new();
    let mut notes = Vec::new();
    for e in engines {
        match phi_system(e) {
            Some(s) if systems.contains(&s) => {}
            Some((lib_name, engine)) => {
                if engine != e {
                    notes.push(format!(
                        "{e}: the φ library's {lib_name} is measured on {engine}, the configuration the search prices"
                    ));
                }
                systems.push((lib_name, engine));
            }
            None => notes.push(format!(
                "{e}: not a fixed system of the φ library ({FIXED_NAMES}); skipped"
            )),
        }
    }
    (systems, notes)
}

/// The φ library's machine line with `provenance` as the one record of how `lib_name`'s entry was measured:
/// an earlier calibration's record of the same system is replaced, not kept beside the new one.
fn with_provenance(machine: &str, lib_name: &str, provenance: &str) -> String {
    let earlier = format!("{lib_name} by cosine-peers --calibrate-phi");
    machine
        .split("; ")
        .filter(|part| !part.starts_with(&earlier))
        .chain(std::iter::once(provenance))
        .collect::<Vec<_>>()
        .join("; ")
}

/// The least memory FASTER runs in (six 32 MiB log pages and its index); 0 when it is not built.
#[cfg(feature = "faster")]
const FASTER_MIN_MEMORY: u64 = adapters::fast::MIN_MEMORY;
#[cfg(not(feature = "faster"))]
const FASTER_MIN_MEMORY: u64 = 0;

/// Cores of this machine: the η the search designs for and the most threads Algorithm 1 times.
fn machine_cores() -> u32 {
    std::thread::available_parallelism().map_or(1, |n| n.get() as u32)
}

fn open(
    engine: &str,
    w: &CoreWorkload,
    memory: u64,
    dir: &std::path::Path,
    durable: bool,
) -> Result<Box<dyn Store>> {
    open_designed(engine, w, memory, dir, durable).map(|(store, _)| store)
}

/// [`open`], with the design the search picked for an engine of ours or for `rocksdb-cosine` (what a cell's
/// row records, so that a table's picks can be checked from its evidence).
fn open_designed(
    engine: &str,
    w: &CoreWorkload,
    memory: u64,
    dir: &std::path::Path,
    durable: bool,
) -> Result<(Box<dyn Store>, Option<Value>)> {
    Ok(match engine {
        e if OURS.contains(&e) => {
            let model = w.to_model();
            let phi = PhiLibrary::default();
            let cores = machine_cores();
            let design = match engine {
                "cosine" => cosine_search::designs::best_for_machine(&model, memory, cores, &phi),
                "cosine-leveled" => cosine_search::designs::best_leveled_lsm_for_machine(
                    &model, memory, cores, &phi,
                ),
                _ => {
                    let log = if engine == "cosine-lsh" {
                        LogKind::Hybrid
                    } else {
                        LogKind::AppendOnly
                    };
                    cosine_search::designs::lsh_for_machine(&model, memory, cores, &phi, log)
                }
            }
            .ok_or_else(|| anyhow!("no {engine} design for {memory} bytes"))?;
            eprintln!(
                "{engine}: {} T={} K={} Z={} M_B={} M_BF={} M_FP={} M_BC={}",
                design.class.map_or("unclassified", |c| c.as_str()),
                design.size_ratio,
                design.hot_runs,
                design.cold_runs,
                design.buffer_bytes,
                design.filter_bytes,
                design.fence_bytes,
                design.cache_bytes
            );
            let sync = if durable {
                SyncMode::Batch
            } else {
                SyncMode::Never
            };
            let store: Box<dyn Store> = Box::new(CosineStore(Arc::new(Engine::open_with(
                dir,
                &design,
                Options::with_sync(sync),
            )?)));
            (store, serde_json::to_value(&design).ok())
        }
        "rocksdb-cosine" => {
            let design = cosine_search::designs::best_leveled_lsm_for_machine(
                &w.to_model(),
                memory,
                machine_cores(),
                &PhiLibrary::default(),
            )
            .ok_or_else(|| anyhow!("no leveled LSM design for {memory} bytes"))?;
            eprintln!(
                "rocksdb-cosine: T={} M_B={} M_BF={} M_FP={}",
                design.size_ratio, design.buffer_bytes, design.filter_bytes, design.fence_bytes
            );
            (
                adapters::open_rocksdb_tuned(&design, w.record_count, memory, dir, durable)?,
                serde_json::to_value(&design).ok(),
            )
        }
        other => (adapters::open(other, memory, dir, durable)?, None),
    })
}

fn workload(a: &Args, name: &str) -> Result<CoreWorkload> {
    let mut w = CoreWorkload::named(name).ok_or_else(|| anyhow!("unknown workload {name}"))?;
    w.record_count = a.records;
    w.operation_count = a.ops;
    Ok(w)
}

/// One cell in this process: load, settle, run; every result verified. Prints one JSON row.
fn run_cell(a: &Args, cell: &str) -> Result<()> {
    if let Some(cg) = &a.cgroup {
        cgroup::join(std::path::Path::new(cg))?;
    }
    let mut parts = cell.splitn(3, ':');
    let (Some(e), Some(wname), Some(round)) = (parts.next(), parts.next(), parts.next()) else {
        bail!("--cell wants ENGINE:WORKLOAD:ROUND");
    };
    let round: u64 = round.parse().context("--cell round")?;
    let w = workload(a, wname)?;
    let dir = std::path::Path::new(&a.dir).join(format!("{e}-{}-{round}", w.name));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir)?;
    let (store, design) = open_designed(e, &w, a.memory, &dir, a.durable)?;
    let ledger = Ledger::default();
    let seed = 1 + 10 * round;
    let load = run_phase(store.as_ref(), &ledger, &w, a.threads, true, seed, None);
    let settle_started = std::time::Instant::now();
    store.settle().map_err(|x| anyhow!("{e}: settle: {x}"))?;
    let settle_seconds = settle_started.elapsed().as_secs_f64();
    let warmup_ops = a.warmup.unwrap_or(a.ops);
    let mut w = w;
    let warmup = (warmup_ops > 0).then(|| {
        let mut warm = w.clone();
        warm.operation_count = warmup_ops;
        run_phase(
            store.as_ref(),
            &ledger,
            &warm,
            a.threads,
            false,
            seed + 5,
            None,
        )
    });
    let mut warmup_settle_seconds = None;
    if let Some(warm) = &warmup {
        // the timed run continues after the warm-up's inserts (new keys, and reads over every record so far)
        // and starts from a store with no flush or compaction of the warm-up's writes pending
        w.inserted_before += warm.inserted;
        let started = std::time::Instant::now();
        store
            .settle()
            .map_err(|x| anyhow!("{e}: settle after the warm-up: {x}"))?;
        warmup_settle_seconds = Some(started.elapsed().as_secs_f64());
    }
    // bytes this process read from the device during the run, the same counter for every engine (each cell
    // is a process of its own; reads served by the page cache do not count)
    let device_before = adapters::proc_io_bytes();
    // and the CPU time of the whole process over the run: the client's (the same work for every engine) and
    // every engine thread's, foreground and background
    let cpu_before = cosine_ycsb::cpu_seconds();
    let device_before_run = adapters::DeviceStats::of(&dir);
    let run = run_phase(
        store.as_ref(),
        &ledger,
        &w,
        a.threads,
        false,
        seed + 1,
        None,
    );
    let device_read_kib_per_op = match (device_before, adapters::proc_io_bytes()) {
        (Some(b), Some(a)) if run.operations > 0 => {
            Some(a.saturating_sub(b) as f64 / 1024.0 / run.operations as f64)
        }
        _ => None,
    };
    // (one reading after the run for both figures)
    let (user_us_per_op, system_us_per_op) = match (cpu_before, cosine_ycsb::cpu_seconds()) {
        (Some(b), Some(a)) if run.operations > 0 => {
            let per_op = |s: f64| Some(s * 1e6 / run.operations as f64);
            (per_op(a.0 - b.0), per_op(a.1 - b.1))
        }
        _ => (None, None),
    };
    let device_after = adapters::DeviceStats::of(&dir);
    // where the client threads' time went, per operation: on a CPU, waiting for one, blocked (the device,
    // locks, write stalls); summed over the threads and divided by the operations, the three add up to
    // about the mean latency
    let client_us = |f: &dyn Fn(&cosine_ycsb::ClientTimes) -> f64| {
        run.client
            .as_ref()
            .filter(|_| run.operations > 0)
            .map(|c| f(c) * 1e6 / run.operations as f64)
    };
    // the device's own counters over the run: the whole device's, so they are this cell's only while nothing
    // else runs on the machine (the harness runs one cell at a time; other tenants are not excluded). Without
    // fsync the writes are mostly the kernel's writeback of what the load and warm-up dirtied
    let device = device_before_run
        .zip(device_after)
        .filter(|_| run.operations > 0)
        .map(|(before, after)| before.since(&after, run.operations));
    let p99 = run.ops.iter().map(|o| o.1.p99_us).fold(0.0, f64::max);
    drop(store);
    let disk: u64 = dir_bytes(&dir);
    let _ = std::fs::remove_dir_all(&dir);
    let row = json!({
        "workload": w.name, "engine": e, "round": round, "durable": a.durable, "design": design,
        "load": load.throughput, "run": run.throughput, "p99_us": p99,
        "errors": load.errors + run.errors + warmup.as_ref().map_or(0, |r| r.errors),
        "wrong": load.wrong + run.wrong + warmup.as_ref().map_or(0, |r| r.wrong),
        "first_wrong": load.first_wrong.or(warmup.as_ref().and_then(|r| r.first_wrong.clone())).or(run.first_wrong),
        "warmup_ops": warmup_ops,
        "read_ios_per_op": run.read_ios_per_op, "settle_seconds": settle_seconds,
        "warmup_settle_seconds": warmup_settle_seconds,
        "device_read_kib_per_op": device_read_kib_per_op,
        "user_cpu_us_per_op": user_us_per_op, "system_cpu_us_per_op": system_us_per_op,
        "client_cpu_us_per_op": client_us(&|c| c.cpu),
        "client_runqueue_us_per_op": client_us(&|c| c.runqueue),
        "client_blocked_us_per_op": client_us(&|c| c.blocked()),
        "device": device,
        "peak_resident_bytes": cosine_ycsb::peak_resident_bytes(), "disk_bytes": disk,
        "malloc_arenas": std::env::var("MALLOC_ARENA_MAX").ok().and_then(|v| v.parse::<u64>().ok()),
    });
    println!("{row}");
    Ok(())
}

/// `--ceiling`: each workload's device-read floor under the memory a cell may use.
fn print_ceiling(a: &Args, workloads: &[CoreWorkload]) {
    let memory = a.memory_cap.unwrap_or(a.memory);
    println!(
        "A perfect cache of all {} MiB ({}) over {} records: the most of the point reads it answers, and the point reads an operation that reach the device even then (scans not bounded)",
        memory >> 20,
        if a.memory_cap.is_some() { "the cap" } else { "--memory" },
        a.records
    );
    println!(
        "| workload | distribution | records cached | hit ceiling | device reads/op at least |"
    );
    println!("| --- | --- | --- | --- | --- |");
    for w in workloads {
        let f = cosine_ycsb::ceiling::read_floor(w, a.records, memory);
        let scans = if w.scan > 0.0 {
            format!(" (and {:.0}% scans, not bounded)", 100.0 * w.scan)
        } else {
            String::new()
        };
        println!(
            "| {} | {:?} | {} | {:.1}% | {:.3}{scans} |",
            w.name,
            w.distribution,
            f.cached_records,
            100.0 * f.hit_ceiling,
            f.device_reads_per_op
        );
    }
}

fn dir_bytes(dir: &std::path::Path) -> u64 {
    std::fs::read_dir(dir)
        .map(|rd| {
            rd.flatten()
                .map(|e| match e.metadata() {
                    Ok(m) if m.is_dir() => dir_bytes(&e.path()),
                    Ok(m) => m.len(),
                    Err(_) => 0,
                })
                .sum()
        })
        .unwrap_or(0)
}

/// Runs one cell in a child process (inside the cgroup when there is one) and returns its row; a child that
/// dies is a row that says how.
fn spawn_cell(
    a: &Args,
    cg: Option<&cgroup::Cgroup>,
    e: &str,
    w: &str,
    round: usize,
) -> Result<Value> {
    let exe = std::env::current_exe()?;
    let mut cmd = std::process::Command::new(exe);
    cmd.args([
        "--cell",
        &format!("{e}:{w}:{round}"),
        "--records",
        &a.records.to_string(),
        "--ops",
        &a.ops.to_string(),
        "--warmup",
        &a.warmup.unwrap_or(a.ops).to_string(),
        "--threads",
        &a.threads.to_string(),
        "--memory",
        &a.memory.to_string(),
        "--dir",
        &a.dir,
    ]);
    if a.durable {
        cmd.arg("--durable");
    }
    if a.malloc_arenas > 0 {
        cmd.env("MALLOC_ARENA_MAX", a.malloc_arenas.to_string());
    }
    if let Some(cg) = cg {
        cg.reset_peak()?;
        cmd.args(["--cgroup", &cg.path().to_string_lossy()]);
    }
    let oom_before = cg.map_or(0, |c| c.oom_kills());
    let mut child = cmd
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::inherit())
        .spawn()
        .context("cannot start a cell's process")?;
    // the row is one short line, printed at the end: the pipe never fills before the child exits
    let started = std::time::Instant::now();
    let mut timed_out = false;
    let status = loop {
        if let Some(status) = child.try_wait()? {
            break status;
        }
        if started.elapsed().as_secs() >= a.cell_timeout {
            let _ = child.kill();
            timed_out = true;
            break child.wait()?;
        }
        std::thread::sleep(std::time::Duration::from_millis(200));
    };
    let mut stdout = String::new();
    if let Some(mut out) = child.stdout.take() {
        use std::io::Read;
        let _ = out.read_to_string(&mut stdout);
    }
    let cgroup_peak = cg.and_then(|c| c.peak());
    let mut row = match stdout
        .lines()
        .rev()
        .find_map(|l| serde_json::from_str::<Value>(l).ok())
    {
        Some(row) if status.success() => row,
        _ => {
            use std::os::unix::process::ExitStatusExt;
            let oom = cg.is_some_and(|c| c.oom_kills() > oom_before);
            let how = match (status.signal(), oom) {
                (_, true) => "killed by the OOM killer".to_string(),
                _ if timed_out => format!("stopped after the {} s cell timeout", a.cell_timeout),
                (Some(sig), _) => format!("killed by signal {sig}"),
                (None, _) => format!("failed ({status})"),
            };
            let _ = std::fs::remove_dir_all(
                std::path::Path::new(&a.dir).join(format!("{e}-{w}-{round}")),
            );
            json!({"workload": w, "engine": e, "round": round, "failed": how})
        }
    };
    if let (Some(peak), Some(obj)) = (cgroup_peak, row.as_object_mut()) {
        obj.insert("cgroup_peak_bytes".into(), json!(peak));
    }
    Ok(row)
}

fn median_and_spread(mut xs: Vec<f64>) -> Option<(f64, f64, f64)> {
    if xs.is_empty() {
        return None;
    }
    xs.sort_by(f64::total_cmp);
    let m = if xs.len() % 2 == 1 {
        xs[xs.len() / 2]
    } else {
        (xs[xs.len() / 2 - 1] + xs[xs.len() / 2]) / 2.0
    };
    Some((m, xs[0], xs[xs.len() - 1]))
}

fn main() {
    if let Err(e) = real_main() {
        eprintln!("cosine-peers: {e:#}");
        std::process::exit(2);
    }
}

fn real_main() -> Result<()> {
    let a = Args::parse();
    if let Some(cell) = &a.cell {
        return run_cell(&a, cell);
    }
    if a.ceiling {
        let workloads: Vec<CoreWorkload> = a
            .workloads
            .split(',')
            .map(str::trim)
            .filter(|s| !s.is_empty())
            .map(|n| workload(&a, n))
            .collect::<Result<_>>()?;
        print_ceiling(&a, &workloads);
        return Ok(());
    }
    let engines: Vec<String> = a
        .engines
        .split(',')
        .map(|s| s.trim().to_string())
        .filter(|s| !s.is_empty())
        .collect();
    for e in &engines {
        let tuned_rocks = e == "rocksdb-cosine" && adapters::AVAILABLE.contains(&"rocksdb");
        let ours = OURS.contains(&e.as_str());
        if !ours && !tuned_rocks && !adapters::AVAILABLE.contains(&e.as_str()) {
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
    if a.rounds == 0 {
        bail!("--rounds must be at least 1");
    }
    let workloads: Vec<CoreWorkload> = a
        .workloads
        .split(',')
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(|n| workload(&a, n))
        .collect::<Result<_>>()?;
    let cg = match a.memory_cap {
        Some(cap) => {
            let data = a.records * (workloads[0].value_bytes() as u64 + 24);
            if data < 4 * cap {
                bail!(
                    "--memory-cap {cap}: the data ({} records, about {} MiB) must be at least 4x the cap so that reads reach the device; raise --records or lower the cap",
                    a.records,
                    data >> 20
                );
            }
            Some(cgroup::Cgroup::create(cap)?)
        }
        None => None,
    };
    let mut rows = Vec::new();
    for round in 0..a.rounds {
        for w in &workloads {
            // rotate the engine order from round to round, so no engine always runs first or last
            let n = engines.len();
            for i in 0..n {
                let e = &engines[(i + round) % n];
                let row = match adapters::unsupported(e, w.scan > 0.0) {
                    Some(why) => {
                        json!({"workload": w.name, "engine": e, "round": round, "unsupported": why})
                    }
                    None => spawn_cell(&a, cg.as_ref(), e, &w.name, round)?,
                };
                match row.get("failed").or(row.get("unsupported")) {
                    Some(f) => eprintln!("{:<8} {:<14} round {round}: {}", w.name, e, f.as_str().unwrap_or("failed")),
                    None => eprintln!(
                        "{:<8} {:<14} round {round}: load {:>9.0} ops/s   run {:>9.0} ops/s   p99 {:>7.0} µs   cpu {:>5.1}+{:<5.1} µs/op   client cpu/queue/blocked {:.1}/{:.1}/{:.1} µs/op   device {:.2} reads/op {:.0} µs each   errors {}   wrong {}   peak RSS {} MiB{}",
                        w.name, e, row["load"].as_f64().unwrap_or(0.0), row["run"].as_f64().unwrap_or(0.0),
                        row["p99_us"].as_f64().unwrap_or(0.0),
                        row["user_cpu_us_per_op"].as_f64().unwrap_or(f64::NAN),
                        row["system_cpu_us_per_op"].as_f64().unwrap_or(f64::NAN),
                        row["client_cpu_us_per_op"].as_f64().unwrap_or(f64::NAN),
                        row["client_runqueue_us_per_op"].as_f64().unwrap_or(f64::NAN),
                        row["client_blocked_us_per_op"].as_f64().unwrap_or(f64::NAN),
                        row["device"]["reads_per_op"].as_f64().unwrap_or(f64::NAN),
                        row["device"]["read_us_each"].as_f64().unwrap_or(f64::NAN),
                        row["errors"], row["wrong"],
                        row["peak_resident_bytes"].as_u64().unwrap_or(0) >> 20,
                        row.get("cgroup_peak_bytes").and_then(Value::as_u64).map_or(String::new(), |p| format!("   cgroup peak {} MiB", p >> 20)),
                    ),
                }
                rows.push(row);
            }
        }
    }
    if let Some(cg) = cg {
        cg.remove();
    }
    let wrong: u64 = rows.iter().filter_map(|r| r["wrong"].as_u64()).sum();
    if a.json {
        println!("{}", serde_json::to_string_pretty(&rows)?);
    } else {
        print_table(&a, &engines, &workloads, &rows);
    }
    if wrong > 0 {
        bail!("{wrong} wrong results (see the rows' first_wrong)");
    }
    Ok(())
}

fn print_table(a: &Args, engines: &[String], workloads: &[CoreWorkload], rows: &[Value]) {
    println!(
        "{} records, {} operations after {} untimed warm-up operations, {} client threads, {} MiB per engine, {}, {}, {}, {} rounds (engine order rotated); run ops/s median (min-max), ratio of medians to rocksdb",
        a.records,
        a.ops,
        a.warmup.unwrap_or(a.ops),
        a.threads,
        a.memory >> 20,
        match a.malloc_arenas {
            0 => "glibc's default malloc arenas".to_string(),
            n => format!("{n} glibc malloc arenas per process"),
        },
        match a.memory_cap {
            Some(c) => format!("memory cgroup capped at {} MiB (page cache included)", c >> 20),
            None => "no memory cap (page cache unlimited)".into(),
        },
        if a.durable { "every write fsynced before its acknowledgement" } else { "every write handed to the OS, no fsync" },
        a.rounds
    );
    println!("| workload | {} |", engines.join(" | "));
    println!("| --- |{}", " --- |".repeat(engines.len()));
    let cell = |w: &str, e: &str| -> (Option<(f64, f64, f64)>, usize, u64, u64) {
        let mine: Vec<&Value> = rows
            .iter()
            .filter(|r| r["workload"] == w && r["engine"] == e)
            .collect();
        let failed = mine.iter().filter(|r| r.get("failed").is_some()).count();
        let wrong = mine.iter().filter_map(|r| r["wrong"].as_u64()).sum();
        let peak = mine
            .iter()
            .filter_map(|r| r["peak_resident_bytes"].as_u64())
            .max()
            .unwrap_or(0);
        (
            median_and_spread(mine.iter().filter_map(|r| r["run"].as_f64()).collect()),
            failed,
            wrong,
            peak,
        )
    };
    for w in workloads {
        let base = cell(&w.name, "rocksdb").0.map(|m| m.0);
        let cells: Vec<String> = engines
            .iter()
            .map(|e| {
                let (m, failed, wrong, peak) = cell(&w.name, e);
                let mut s = match m {
                    Some((med, lo, hi)) => {
                        let ratio = match base {
                            Some(b) if e != "rocksdb" => format!(" {:.2}×", med / b),
                            _ => String::new(),
                        };
                        format!("{med:.0} ({lo:.0}-{hi:.0}){ratio}, {} MiB", peak >> 20)
                    }
                    None => match adapters::unsupported(e, w.scan > 0.0) {
                        Some(why) => why.into(),
                        None => "-".into(),
                    },
                };
                if failed > 0 {
                    s += &format!(", {failed} killed/failed");
                }
                if wrong > 0 {
                    s += &format!(", **{wrong} wrong**");
                }
                s
            })
            .collect();
        println!("| {} | {} |", w.name, cells.join(" | "));
    }
}

#[cfg(test)]
mod tests {
    use super::{phi_system, phi_systems, with_provenance};
    #[cfg(feature = "wiredtiger")]
    use cosine_peers::adapters;

    #[test]
    fn the_phi_librarys_wiredtiger_is_measured_on_the_leaves_the_search_prices() {
        // the search prices WiredTiger's B-tree over 32 KiB leaves; the benchmark's `wiredtiger` has 8 KB ones
        assert_eq!(cosine_search::designs::WIREDTIGER_LEAF_BYTES, 32 * 1024);
        assert_eq!(
            phi_system("wiredtiger"),
            Some(("wiredtiger", "wiredtiger-32k"))
        );
        assert_eq!(
            phi_system("wiredtiger-32k"),
            Some(("wiredtiger", "wiredtiger-32k"))
        );
        assert_eq!(phi_system("rocksdb"), Some(("rocksdb", "rocksdb")));
        assert_eq!(phi_system("faster"), Some(("faster", "faster")));
        for not_fixed in [
            "cosine",
            "rocksdb-cosine",
            "wiredtiger-lsm",
            "fjall",
            "redb",
            "sled",
        ] {
            assert_eq!(phi_system(not_fixed), None, "{not_fixed}");
        }
        #[cfg(feature = "wiredtiger")]
        assert_eq!(
            adapters::wt::Table::named("wiredtiger-32k").map(|t| t.leaf_page_max()),
            Some(None),
            "wiredtiger-32k must keep WiredTiger's default leaves"
        );
    }

    #[test]
    fn each_fixed_system_is_measured_once_and_the_rest_are_named() {
        let names: Vec<String> = ["cosine", "wiredtiger", "rocksdb", "wiredtiger-32k", "sled"]
            .map(String::from)
            .to_vec();
        let (systems, notes) = phi_systems(&names);
        assert_eq!(
            systems,
            [("wiredtiger", "wiredtiger-32k"), ("rocksdb", "rocksdb")]
        );
        assert_eq!(notes.len(), 3, "{notes:?}");
        assert!(
            notes[0].starts_with("cosine: not a fixed system"),
            "{notes:?}"
        );
        assert!(notes[1]
            .starts_with("wiredtiger: the φ library's wiredtiger is measured on wiredtiger-32k"));
        assert!(
            notes[2].starts_with("sled: not a fixed system"),
            "{notes:?}"
        );
        assert!(phi_systems(&["fjall".to_string()]).0.is_empty());
    }

    #[test]
    fn a_recalibration_replaces_the_systems_earlier_provenance() {
        let once = with_provenance(
            "2 cores; wiredtiger by cosine-peers --calibrate-phi (200000 records, 200000 operations per measurement)",
            "wiredtiger",
            "wiredtiger by cosine-peers --calibrate-phi on wiredtiger-32k (20000 records)",
        );
        assert_eq!(
            once,
            "2 cores; wiredtiger by cosine-peers --calibrate-phi on wiredtiger-32k (20000 records)"
        );
        // another system's record stays
        let both = with_provenance(
            &once,
            "rocksdb",
            "rocksdb by cosine-peers --calibrate-phi (1 records)",
        );
        assert!(
            both.contains("wiredtiger by")
                && both.ends_with("rocksdb by cosine-peers --calibrate-phi (1 records)")
        );
    }
}

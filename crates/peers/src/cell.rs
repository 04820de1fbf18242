//! One cell of the comparison (an engine on a workload in one round): run in a process of its own
//! ([`spawn_cell`], inside the memory cgroup when there is one), which loads, settles, warms up and runs it
//! ([`run_cell`]) and prints its row.

use crate::args::Args;
use crate::engines::open_designed;
use anyhow::{anyhow, bail, Context, Result};
use cosine_peers::{adapters, cgroup};
use cosine_ycsb::{run_phase, CoreWorkload, Ledger, PhaseReport, Store};
use serde_json::{json, Value};

/// One cell in this process: load, settle, warm up, run; every result verified. Prints one JSON row.
pub(crate) fn run_cell(a: &Args, cell: &str) -> Result<()> {
    if let Some(cg) = &a.cgroup {
        cgroup::join(std::path::Path::new(cg))?;
    }
    let (e, wname, round) = parse_cell(cell)?;
    let w = a.workload(wname)?;
    let dir = std::path::Path::new(&a.dir).join(format!("{e}-{}-{round}", w.name));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir)?;
    let given = match &a.design {
        Some(path) => Some(
            cosine_design::Design::from_json(
                &std::fs::read_to_string(path).with_context(|| format!("reading {path}"))?,
            )
            .with_context(|| format!("design {path}"))?,
        ),
        None => None,
    };
    let (store, design) = open_designed(e, &w, a.memory, &dir, a.durable, given.as_ref())?;
    let ledger = Ledger::default();
    let seed = a.seed + 10 * round;
    let (w, before) = load_and_warm_up(a, e, store.as_ref(), &ledger, w, seed)?;
    let run = timed_run(a, store.as_ref(), &ledger, &w, seed, &dir);
    drop(store);
    let disk: u64 = dir_bytes(&dir);
    let _ = std::fs::remove_dir_all(&dir);
    let row = cell_row(a, (e, round), &w, design, before, run, disk);
    println!("{row}");
    Ok(())
}

/// `--cell`'s ENGINE:WORKLOAD:ROUND.
fn parse_cell(cell: &str) -> Result<(&str, &str, u64)> {
    let mut parts = cell.splitn(3, ':');
    let (Some(e), Some(wname), Some(round)) = (parts.next(), parts.next(), parts.next()) else {
        bail!("--cell wants ENGINE:WORKLOAD:ROUND");
    };
    let round: u64 = round.parse().context("--cell round")?;
    Ok((e, wname, round))
}

/// What came before a cell's timed run: the load, the warm-up, and the settles after each.
struct BeforeRun {
    load: PhaseReport,
    /// Seconds the settle after the load took.
    settle_seconds: f64,
    /// Operations of the warm-up (`--warmup`, default `--ops`).
    warmup_ops: u64,
    warmup: Option<PhaseReport>,
    /// Seconds the settle after the warm-up took.
    warmup_settle_seconds: Option<f64>,
}

/// Loads `w` into `store` and settles it, then runs the untimed warm-up and settles again; returns the
/// workload the timed run continues with (after the warm-up's inserts) and what the steps measured.
fn load_and_warm_up(
    a: &Args,
    e: &str,
    store: &dyn Store,
    ledger: &Ledger,
    mut w: CoreWorkload,
    seed: u64,
) -> Result<(CoreWorkload, BeforeRun)> {
    let load = run_phase(store, ledger, &w, a.threads, true, seed, None);
    let settle_started = std::time::Instant::now();
    store.settle().map_err(|x| anyhow!("{e}: settle: {x}"))?;
    let settle_seconds = settle_started.elapsed().as_secs_f64();
    let warmup_ops = a.warmup.unwrap_or(a.ops);
    let warmup = (warmup_ops > 0).then(|| {
        let mut warm = w.clone();
        warm.operation_count = warmup_ops;
        run_phase(store, ledger, &warm, a.threads, false, seed + 5, None)
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
    Ok((
        w,
        BeforeRun {
            load,
            settle_seconds,
            warmup_ops,
            warmup,
            warmup_settle_seconds,
        },
    ))
}

/// The timed run and what the OS counted over it.
struct TimedRun {
    run: PhaseReport,
    /// KiB this process read from the device per operation.
    device_read_kib_per_op: Option<f64>,
    /// The process's user CPU time per operation, µs.
    user_us_per_op: Option<f64>,
    /// The process's kernel CPU time per operation, µs.
    system_us_per_op: Option<f64>,
    /// The device's own counters over the run, per operation.
    device: Option<Value>,
}

/// The timed run of `w` on `store`, with the process's device reads and CPU time and the device's counters
/// read around it.
fn timed_run(
    a: &Args,
    store: &dyn Store,
    ledger: &Ledger,
    w: &CoreWorkload,
    seed: u64,
    dir: &std::path::Path,
) -> TimedRun {
    // bytes this process read from the device during the run, the same counter for every engine (each cell
    // is a process of its own; reads served by the page cache do not count)
    let device_before = adapters::proc_io_bytes();
    // and the CPU time of the whole process over the run: the client's (the same work for every engine) and
    // every engine thread's, foreground and background
    let cpu_before = cosine_ycsb::cpu_seconds();
    let device_before_run = adapters::DeviceStats::of(dir);
    let run = run_phase(store, ledger, w, a.threads, false, seed + 1, None);
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
    let device_after = adapters::DeviceStats::of(dir);
    // the device's own counters over the run: the whole device's, so they are this cell's only while nothing
    // else runs on the machine (the harness runs one cell at a time; other tenants are not excluded). Without
    // fsync the writes are mostly the kernel's writeback of what the load and warm-up dirtied
    let device = device_before_run
        .zip(device_after)
        .filter(|_| run.operations > 0)
        .map(|(before, after)| before.since(&after, run.operations));
    TimedRun {
        run,
        device_read_kib_per_op,
        user_us_per_op,
        system_us_per_op,
        device,
    }
}

/// The cell's JSON row.
fn cell_row(
    a: &Args,
    (e, round): (&str, u64),
    w: &CoreWorkload,
    design: Option<Value>,
    before: BeforeRun,
    timed: TimedRun,
    disk: u64,
) -> Value {
    let BeforeRun {
        load,
        settle_seconds,
        warmup_ops,
        warmup,
        warmup_settle_seconds,
    } = before;
    let TimedRun {
        run,
        device_read_kib_per_op,
        user_us_per_op,
        system_us_per_op,
        device,
    } = timed;
    // where the client threads' time went, per operation: on a CPU, waiting for one, blocked (the device,
    // locks, write stalls); summed over the threads and divided by the operations, the three add up to
    // about the mean latency
    let client_us = |f: &dyn Fn(&cosine_ycsb::ClientTimes) -> f64| {
        run.client
            .as_ref()
            .filter(|_| run.operations > 0)
            .map(|c| f(c) * 1e6 / run.operations as f64)
    };
    let p99 = run.ops.iter().map(|o| o.1.p99_us).fold(0.0, f64::max);
    json!({
        "workload": w.name, "engine": e, "round": round, "durable": a.durable, "design": design,
        "load": load.throughput, "run": run.throughput, "p99_us": p99,
        "errors": load.errors + run.errors + warmup.as_ref().map_or(0, |r| r.errors),
        "wrong": load.wrong + run.wrong + warmup.as_ref().map_or(0, |r| r.wrong),
        "first_wrong": load.first_wrong.or(warmup.as_ref().and_then(|r| r.first_wrong.clone())).or(run.first_wrong),
        "warmup_ops": warmup_ops,
        "read_ios_per_op": run.read_ios_per_op, "background_ios_per_op": run.background_ios_per_op,
        "settle_seconds": settle_seconds,
        "warmup_settle_seconds": warmup_settle_seconds,
        "device_read_kib_per_op": device_read_kib_per_op,
        "user_cpu_us_per_op": user_us_per_op, "system_cpu_us_per_op": system_us_per_op,
        "client_cpu_us_per_op": client_us(&|c| c.cpu),
        "client_runqueue_us_per_op": client_us(&|c| c.runqueue),
        "client_blocked_us_per_op": client_us(&|c| c.blocked()),
        "device": device,
        "peak_resident_bytes": cosine_ycsb::peak_resident_bytes(), "disk_bytes": disk,
        "malloc_arenas": std::env::var("MALLOC_ARENA_MAX").ok().and_then(|v| v.parse::<u64>().ok()),
    })
}

/// Bytes of the files under `dir`.
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
pub(crate) fn spawn_cell(
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
        "--seed",
        &a.seed.to_string(),
        "--memory",
        &a.memory.to_string(),
        "--dir",
        &a.dir,
    ]);
    if a.durable {
        cmd.arg("--durable");
    }
    if let Some(d) = &a.design {
        cmd.args(["--design", d]);
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

//! `cosine profile`: measures this machine (cores, memory or its cgroup's limit, the disk's random reads at
//! queue depths 1 to 32 with O_DIRECT, sequential bandwidth, fsync latency, the CPU an operation costs our
//! engine per design class, the engine's memory beyond its design) and writes a catalog of one VM, `local`,
//! and a CPU library, for `cosine search --catalog` and `cosine verify`.

use crate::describe;
use anyhow::{bail, Context, Result};
use clap::Parser;
use cosine_cost_model::cpu::CpuLibrary;
use cosine_validate::overhead::{held_by_design, Held};
use cosine_validate::probe::{self, DiskProbe};
use cosine_validate::profile::{today, Profile};
use std::path::PathBuf;
use std::time::Duration;

/// Arguments of `cosine profile`.
#[derive(Parser, Debug)]
pub struct ProfileArgs {
    /// Directory the catalog (machine.json) and the CPU library (cpu.json) are written to.
    #[arg(long, default_value = "cosine-profile")]
    out: PathBuf,
    /// Directory on the disk to measure (a test file is made there and removed; default: --out).
    #[arg(long)]
    dir: Option<PathBuf>,
    /// Memory the engine will have, in bytes (the memory cgroup `cosine verify` runs it in): the VM's memory
    /// in the catalog, the operating system outside it. Default: this process's cgroup limit, or the machine's.
    #[arg(long)]
    memory: Option<u64>,
    /// Bytes of one random read (the designs' block size).
    #[arg(long, default_value_t = 4096)]
    block_bytes: u64,
    /// Bytes of the disk's test file (random reads land anywhere in it).
    #[arg(long, default_value_t = 2 << 30)]
    file_bytes: u64,
    /// Records and operations a round of the CPU measurement.
    #[arg(long, default_value_t = 100_000)]
    records: u64,
    /// A short run for a smoke test: a 32 MiB file, a fifth of a second a queue depth, 4,000 records.
    #[arg(long)]
    quick: bool,
    /// (internal) Measures the engine's resident memory at one design size and prints it as JSON.
    #[arg(long, hide = true)]
    memory_probe: Option<u64>,
}

/// Runs `cosine profile`.
pub fn run(a: ProfileArgs) -> Result<()> {
    if let Some(bytes) = a.memory_probe {
        return memory_probe(bytes, a.dir.as_ref().unwrap_or(&a.out));
    }
    if a.block_bytes < 512 || !a.block_bytes.is_power_of_two() {
        bail!(
            "--block-bytes must be a power of two of at least 512, got {}",
            a.block_bytes
        );
    }
    if a.memory == Some(0) {
        bail!("--memory must be positive");
    }
    std::fs::create_dir_all(&a.out).with_context(|| format!("creating {}", a.out.display()))?;
    let dir = a.dir.clone().unwrap_or_else(|| a.out.clone());
    let host = probe::host();
    eprintln!(
        "{} cores, {} of memory{}",
        host.cores,
        describe::bytes(host.memory_bytes as f64),
        if host.cgroup_limited {
            " (this process's cgroup limit)"
        } else {
            ""
        }
    );
    let disk = measure_disk(&a, dir.clone())?;
    let records = if a.quick { 4_000 } else { a.records.max(1_000) };
    let (cpu, block_us) =
        cosine_validate::measure_engine_cpu(records, records, |class, op, us| {
            eprintln!("  CPU: {class} {op} {us:.1} µs")
        })?;
    let sizes: [u64; 2] = if a.quick {
        [4 << 20, 8 << 20]
    } else {
        [32 << 20, 128 << 20]
    };
    let held: Vec<Held> = sizes
        .iter()
        .map(|&m| probe_in_child(m, &dir))
        .collect::<Result<_>>()?;
    let profile = Profile {
        memory_bytes: a.memory.unwrap_or(host.memory_bytes),
        cgroup: a.memory.is_some() || host.cgroup_limited,
        host,
        disk,
        block_bytes: a.block_bytes,
        cpu,
        block_us,
        overhead: Some((held[0], held[1])),
        as_of: today(),
    };
    let catalog = a.out.join("machine.json");
    let cpu_path = a.out.join("cpu.json");
    std::fs::write(
        &catalog,
        serde_json::to_string_pretty(&profile.catalog_json())? + "\n",
    )
    .with_context(|| format!("writing {}", catalog.display()))?;
    let lib = profile.cpu_library(&CpuLibrary::learned());
    std::fs::write(&cpu_path, serde_json::to_string_pretty(&lib)? + "\n")
        .with_context(|| format!("writing {}", cpu_path.display()))?;
    // the catalog must load as the search will read it
    cosine_cloud_pricing::load(&catalog.to_string_lossy())
        .with_context(|| format!("reading back {}", catalog.display()))?;
    print_summary(&profile, &lib);
    println!(
        "\nwrote {} (one VM, `local`) and {} (our engine's classes measured here; the fixed systems' from the \
         shipped library: cosine-peers --measure-cpu {} --cpu-base {} measures them)",
        catalog.display(),
        cpu_path.display(),
        cpu_path.display(),
        cpu_path.display()
    );
    Ok(())
}

/// The disk's probe, at the sizes asked for (or the quick ones); a warning line for what could not be done as
/// asked (O_DIRECT refused).
fn measure_disk(a: &ProfileArgs, dir: PathBuf) -> Result<cosine_validate::probe::DiskProfile> {
    let (file_bytes, per_depth, depths, fsyncs) = if a.quick {
        (32 << 20, Duration::from_millis(200), vec![1, 4], 10)
    } else {
        (
            a.file_bytes,
            Duration::from_secs(3),
            vec![1, 2, 4, 8, 16, 32],
            200,
        )
    };
    let disk = probe::disk(&DiskProbe {
        dir: dir.clone(),
        file_bytes,
        block_bytes: a.block_bytes,
        depths,
        per_depth,
        fsyncs,
    })
    .with_context(|| format!("measuring the disk under {}", dir.display()))?;
    for w in &disk.warnings {
        eprintln!("warning: {w}");
    }
    Ok(disk)
}

/// The engine's memory at one design size, in a process of its own (an allocator keeps what an earlier engine
/// freed).
fn probe_in_child(memory: u64, dir: &std::path::Path) -> Result<Held> {
    let exe =
        std::env::current_exe().context("finding this program to measure memory in a child")?;
    let out = std::process::Command::new(exe)
        .args(["profile", "--memory-probe", &memory.to_string(), "--dir"])
        .arg(dir)
        .output()
        .context("running the memory probe")?;
    if !out.status.success() {
        bail!(
            "the memory probe at {} failed: {}",
            describe::bytes(memory as f64),
            String::from_utf8_lossy(&out.stderr).trim()
        );
    }
    let v: serde_json::Value =
        serde_json::from_slice(&out.stdout).context("the memory probe's answer")?;
    let get = |k: &str| {
        v[k].as_u64()
            .ok_or_else(|| anyhow::anyhow!("the memory probe gave no {k}"))
    };
    Ok(Held {
        design_bytes: get("design_bytes")?,
        resident_bytes: get("resident_bytes")?,
        structures_bytes: get("structures_bytes")?,
    })
}

/// `--memory-probe`: one design size in this process, printed as JSON.
fn memory_probe(memory: u64, dir: &std::path::Path) -> Result<()> {
    let db = dir.join(format!("cosine-memory-probe-{}", std::process::id()));
    let held = held_by_design(memory, &db);
    let _ = std::fs::remove_dir_all(&db);
    let h = held?;
    println!(
        "{}",
        serde_json::json!({"design_bytes": h.design_bytes, "resident_bytes": h.resident_bytes,
            "structures_bytes": h.structures_bytes})
    );
    Ok(())
}

fn print_summary(p: &Profile, lib: &CpuLibrary) {
    let d = &p.disk;
    println!(
        "this machine: {} cores, {} for the engine{}",
        p.host.cores,
        describe::bytes(p.memory_bytes as f64),
        if p.cgroup {
            " (a memory cgroup's limit: the operating system outside it)"
        } else {
            ""
        }
    );
    println!(
        "disk ({}, {}-byte reads):",
        if d.direct {
            "O_DIRECT"
        } else {
            "through the page cache: O_DIRECT refused"
        },
        p.block_bytes
    );
    for q in &d.depths {
        println!(
            "  {:>2} in flight: {:>9} reads/s, {} each",
            q.depth,
            describe::count(q.iops),
            describe::duration(q.latency_us * 1e-6)
        );
    }
    println!(
        "  sequential: write {} MiB/s, read {} MiB/s; fsync of a 4 KiB append {}",
        describe::count(d.write_mibps),
        describe::count(d.read_mibps),
        describe::duration(d.fsync_us * 1e-6)
    );
    println!(
        "  CPU of a read: O_DIRECT {:.1} µs, through the page cache missing it {:.1} µs{}, hitting it {:.1} µs; of a flushed or compacted block {:.1} µs",
        d.device_read_cpu_us,
        d.buffered_miss_cpu_us,
        if d.miss_under_pressure {
            " (a full page cache: each miss reclaims a page)"
        } else {
            " (its page dropped: no reclaim counted)"
        },
        d.cached_read_cpu_us,
        lib.block_us
    );
    println!("our engine's CPU an operation, one core, data in memory (µs):");
    println!(
        "  {:<8} {:>7} {:>7} {:>7} {:>7} {:>10} {:>11}",
        "class", "lookup", "insert", "update", "rmw", "scan seek", "scan entry"
    );
    for (class, m) in &p.cpu {
        let o = &m.op;
        println!(
            "  {:<8} {:>7.1} {:>7.1} {:>7.1} {:>7.1} {:>10.1} {:>11.2}",
            class.as_str(),
            o.lookup_us,
            o.insert_us,
            o.blind_update_us,
            o.rmw_us,
            o.scan_us,
            o.scan_entry_us
        );
    }
    if let (Some((a, b)), Some((bytes, share))) = (&p.overhead, p.engine_overhead()) {
        println!(
            "engine memory beyond its design: {} at a {} design, {} at {}: {} + {:.0}% of the design",
            describe::bytes(a.overhead_bytes()),
            describe::bytes(a.design_bytes as f64),
            describe::bytes(b.overhead_bytes()),
            describe::bytes(b.design_bytes as f64),
            describe::bytes(bytes),
            share * 100.0
        );
    }
}

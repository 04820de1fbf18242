//! `cosine-peers`: YCSB A-F on our engine and on peer engines, all in one run on one machine with the same
//! memory budget, printed as the BENCHMARKS.md table.
//!
//! `cargo run --release -p cosine-peers --features peers -- --records 1000000 --ops 500000`
//! (RocksDB links Debian's librocksdb-dev 7.8.3: `ROCKSDB_LIB_DIR=/usr/lib/x86_64-linux-gnu`).
//! Without the `peers` feature only the Cosine engine is available.
//!
//! The command line is in `args`, the engines a cell opens in `engines`, one cell (its own process) in
//! `cell`, `--calibrate-phi` in `phi`, and what is printed in `report`; this file runs the rounds.

mod args;
mod cell;
mod cpu;
mod engines;
mod phi;
mod report;

use anyhow::{bail, Result};
use args::Args;
use clap::Parser;
use cosine_peers::{adapters, cgroup};
use cosine_ycsb::CoreWorkload;
use serde_json::{json, Value};

fn main() {
    if let Err(e) = real_main() {
        eprintln!("cosine-peers: {e:#}");
        std::process::exit(2);
    }
}

fn real_main() -> Result<()> {
    let a = Args::parse();
    if let Some(cell) = &a.cell {
        return cell::run_cell(&a, cell);
    }
    if a.ceiling {
        let workloads = a.named_workloads()?;
        report::print_ceiling(&a, &workloads);
        return Ok(());
    }
    let engines = a.engine_names();
    check_engines(&engines)?;
    if let Some(out) = &a.calibrate_phi {
        return phi::calibrate_peers(&a, &engines, out);
    }
    if let Some(out) = &a.measure_cpu {
        return cpu::measure_peers(&a, &engines, out);
    }
    if a.rounds == 0 {
        bail!("--rounds must be at least 1");
    }
    let workloads = a.named_workloads()?;
    let cg = memory_cgroup(&a, &workloads)?;
    let rows = run_rounds(&a, cg.as_ref(), &engines, &workloads)?;
    if let Some(cg) = cg {
        cg.remove();
    }
    let wrong: u64 = rows.iter().filter_map(|r| r["wrong"].as_u64()).sum();
    if a.json {
        println!("{}", serde_json::to_string_pretty(&rows)?);
    } else {
        report::print_table(&a, &engines, &workloads, &rows);
    }
    if wrong > 0 {
        bail!("{wrong} wrong results (see the rows' first_wrong)");
    }
    Ok(())
}

/// An error naming the first engine this build cannot run.
fn check_engines(names: &[String]) -> Result<()> {
    for e in names {
        let tuned_rocks = e == "rocksdb-cosine" && adapters::AVAILABLE.contains(&"rocksdb");
        let ours = engines::OURS.contains(&e.as_str());
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
    Ok(())
}

/// The memory cgroup every cell runs in under `--memory-cap`, once the data is checked to be at least 4× the
/// cap; None without a cap.
fn memory_cgroup(a: &Args, workloads: &[CoreWorkload]) -> Result<Option<cgroup::Cgroup>> {
    Ok(match a.memory_cap {
        Some(cap) => {
            let data = a.records * (workloads[0].value_bytes() as u64 + 24);
            if data < 4 * cap {
                bail!(
                    "--memory-cap {cap}: the data ({} records, about {} MiB) must be at least 4x the cap so that reads reach the device; raise --records or lower the cap",
                    a.records,
                    data >> 20
                );
            }
            match cgroup::Cgroup::create("cosine-peers", cap) {
                Ok(cg) => Some(cg),
                // `--cap-or-warn` (what `cosine verify` passes): the run goes on, and says what it could not
                // enforce
                Err(e) if a.cap_or_warn => {
                    eprintln!(
                        "warning: no memory cgroup ({e}): every cell runs without the {} MiB cap, so the page cache may answer reads the cap would send to the device",
                        cap >> 20
                    );
                    None
                }
                Err(e) => return Err(e.into()),
            }
        }
        None => None,
    })
}

/// Every cell, round after round, each workload in turn, the engine order rotated from round to round: a row
/// per cell (a cell FASTER cannot run is a row that says so).
fn run_rounds(
    a: &Args,
    cg: Option<&cgroup::Cgroup>,
    engines: &[String],
    workloads: &[CoreWorkload],
) -> Result<Vec<Value>> {
    let mut rows = Vec::new();
    for round in 0..a.rounds {
        for w in workloads {
            // rotate the engine order from round to round, so no engine always runs first or last
            let n = engines.len();
            for i in 0..n {
                let e = &engines[(i + round) % n];
                let row = match adapters::unsupported(e, w.scan > 0.0) {
                    Some(why) => {
                        json!({"workload": w.name, "engine": e, "round": round, "unsupported": why})
                    }
                    None => cell::spawn_cell(a, cg, e, &w.name, round)?,
                };
                report::print_progress(&w.name, e, round, &row);
                rows.push(row);
            }
        }
    }
    Ok(rows)
}

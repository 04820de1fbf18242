//! What `cosine-peers` prints: a cell's progress line, the table of every engine on every workload (the median
//! run and its spread over the rounds), and `--ceiling`'s table of the device-read floor.

use crate::args::Args;
use cosine_peers::adapters;
use cosine_ycsb::CoreWorkload;
use serde_json::Value;

/// `--ceiling`: each workload's device-read floor under the memory a cell may use.
pub(crate) fn print_ceiling(a: &Args, workloads: &[CoreWorkload]) {
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

/// The median of `xs` and its lowest and highest; None when empty.
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

/// The table of `rows`: one line per workload, one column per engine (run ops/s median, min-max, ratio to
/// RocksDB's median, peak memory, and how many rounds failed or returned wrong results).
pub(crate) fn print_table(
    a: &Args,
    engines: &[String],
    workloads: &[CoreWorkload],
    rows: &[Value],
) {
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

/// A cell's line on stderr as it finishes: its figures, or why it failed or was not run.
pub(crate) fn print_progress(w: &str, e: &str, round: usize, row: &Value) {
    match row.get("failed").or(row.get("unsupported")) {
        Some(f) => eprintln!("{:<8} {:<14} round {round}: {}", w, e, f.as_str().unwrap_or("failed")),
        None => eprintln!(
            "{:<8} {:<14} round {round}: load {:>9.0} ops/s   run {:>9.0} ops/s   p99 {:>7.0} µs   cpu {:>5.1}+{:<5.1} µs/op   client cpu/queue/blocked {:.1}/{:.1}/{:.1} µs/op   device {:.2} reads/op {:.0} µs each   errors {}   wrong {}   peak RSS {} MiB{}",
            w, e, row["load"].as_f64().unwrap_or(0.0), row["run"].as_f64().unwrap_or(0.0),
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
}

//! The short version of the capped comparison (BENCHMARKS.md, "YCSB A-F under a memory cap"): Cosine and, when
//! built, RocksDB run ycsb-c in a memory cgroup with the data more than 4x the cap, so reads reach the device.
//! Every read is verified. Skipped, with the reason printed, where no memory cgroup can be made (not root, or
//! no cgroup hierarchy with the memory controller).

use std::process::Command;

const CAP: u64 = 48 << 20;

fn cgroup_reason() -> Option<String> {
    let v1 = std::path::Path::new("/sys/fs/cgroup/memory");
    let v2 = std::path::Path::new("/sys/fs/cgroup/cgroup.controllers");
    let v2_memory =
        std::fs::read_to_string(v2).is_ok_and(|c| c.split_whitespace().any(|x| x == "memory"));
    if !(v1.is_dir() || v2_memory) {
        return Some("no memory cgroup hierarchy (v1 or v2 with the memory controller)".into());
    }
    // making a cgroup needs root (or a delegated hierarchy): try it
    let name = format!("cosine-peers-probe-{}", std::process::id());
    let probe = if v1.is_dir() {
        v1.join(name)
    } else {
        std::path::Path::new("/sys/fs/cgroup").join(name)
    };
    match std::fs::create_dir(&probe) {
        Ok(()) => {
            let _ = std::fs::remove_dir(&probe);
            None
        }
        Err(e) => Some(format!("cannot make a cgroup ({}): {e}", probe.display())),
    }
}

/// The engines a run here compares: Cosine, and RocksDB where it is built.
const ENGINES: &str = if cfg!(feature = "rocksdb") {
    "cosine,rocksdb"
} else {
    "cosine"
};

/// Runs `cosine-peers --json` on [`ENGINES`] with `args` in a directory of its own and returns its rows, one
/// an engine, each checked for no wrong result and no error.
fn verified_rows(name: &str, args: &[&str]) -> Vec<serde_json::Value> {
    let dir = std::env::temp_dir().join(format!("cosine-peers-{name}-{}", std::process::id()));
    let out = Command::new(env!("CARGO_BIN_EXE_cosine-peers"))
        .args(["--engines", ENGINES, "--rounds", "1", "--json"])
        .args(args)
        .arg("--dir")
        .arg(&dir)
        .output()
        .expect("run cosine-peers");
    let _ = std::fs::remove_dir_all(&dir);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let rows: Vec<serde_json::Value> = serde_json::from_slice(&out.stdout).expect("JSON rows");
    assert_eq!(rows.len(), ENGINES.split(',').count(), "{rows:?}");
    for r in &rows {
        let engine = r["engine"].as_str().unwrap_or("?");
        assert_eq!(r["wrong"], 0, "{engine}: wrong results {r}");
        assert_eq!(r["errors"], 0, "{engine}: errors {r}");
    }
    rows
}

#[test]
fn a_tiny_capped_run_reaches_the_device_and_verifies_every_read() {
    if let Some(why) = cgroup_reason() {
        eprintln!("skipped: {why}");
        return;
    }
    let cap = CAP.to_string();
    let rows = verified_rows(
        "capped",
        &[
            "--workloads",
            "ycsb-c",
            "--records",
            "200000",
            "--ops",
            "5000",
            "--memory",
            "8388608",
            "--memory-cap",
            &cap,
        ],
    );
    for r in &rows {
        let engine = r["engine"].as_str().unwrap_or("?");
        let disk = r["disk_bytes"].as_u64().unwrap_or(0);
        assert!(
            disk >= 4 * CAP,
            "{engine}: {disk} bytes of data is not 4x the cap"
        );
        let peak = r["peak_resident_bytes"].as_u64().unwrap_or(u64::MAX);
        assert!(
            peak <= CAP,
            "{engine}: peak resident {peak} above the cap {CAP}"
        );
        // with the data 4x the memory the process may hold, lookups read blocks: about one a lookup, not
        // none (the engine's own count, page-cache hits included where the engine has one: Cosine's)
        let reads = r["read_ios_per_op"].as_f64().unwrap_or(0.0);
        assert!(reads > 0.5, "{engine}: {reads} block reads a lookup");
        // and the device: the bytes the process read from storage (/proc/self/io, page-cache hits not
        // counted), at least a 4 KiB block for one lookup in eight; a machine without the counter says so
        match r["device_read_kib_per_op"].as_f64() {
            Some(kib) => assert!(
                kib > 0.5,
                "{engine}: {kib} KiB read from the device a lookup: the reads did not reach it"
            ),
            None => eprintln!("{engine}: no /proc/self/io here, the device's reads not checked"),
        }
        assert_eq!(r["durable"], false, "{engine}: {r}");
    }
}

/// `--durable` runs end to end: every engine opened to fsync each write (or group of concurrent writes) before
/// acknowledging it, every result verified, and the row says which durability it ran with. No cgroup needed.
#[test]
fn a_durable_run_verifies_every_result_and_says_so() {
    let rows = verified_rows(
        "durable",
        &[
            "--workloads",
            "ycsb-a",
            "--records",
            "2000",
            "--ops",
            "400",
            "--warmup",
            "100",
            "--memory",
            "4194304",
            "--durable",
        ],
    );
    for r in &rows {
        let engine = r["engine"].as_str().unwrap_or("?");
        assert_eq!(r["durable"], true, "{engine}: {r}");
        assert!(r["run"].as_f64().unwrap_or(0.0) > 0.0, "{engine}: {r}");
    }
    let cosine = rows
        .iter()
        .find(|r| r["engine"] == "cosine")
        .expect("a cosine row");
    assert!(
        cosine["design"]["size_ratio"].as_u64().is_some(),
        "the row records the search's design: {cosine}"
    );
}

/// `--ceiling` prints each workload's device-read floor without running an engine: a perfect cache of 1 MiB
/// over 20,000 YCSB-C records answers about a third of the reads, never all; the recency skew of D far more.
#[test]
fn the_ceiling_prints_each_workloads_floor_without_running_an_engine() {
    let out = Command::new(env!("CARGO_BIN_EXE_cosine-peers"))
        .args([
            "--ceiling",
            "--records",
            "20000",
            "--memory",
            "1048576",
            "--workloads",
            "ycsb-c,ycsb-d,ycsb-e",
        ])
        .output()
        .expect("cosine-peers runs");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8_lossy(&out.stdout);
    let row = |name: &str| -> Vec<String> {
        text.lines()
            .find(|l| l.starts_with(&format!("| {name} |")))
            .unwrap_or_else(|| panic!("no {name} row in {text}"))
            .split('|')
            .map(|c| c.trim().to_string())
            .collect()
    };
    let hit = |r: &[String]| r[4].trim_end_matches('%').parse::<f64>().expect("a share");
    let c = row("ycsb-c");
    // 1 MiB holds 1,024 records of 1,024 bytes
    assert_eq!(c[3], "1024");
    assert!((20.0..50.0).contains(&hit(&c)), "{c:?}");
    let reads: f64 = c[5].parse().expect("reads an operation");
    assert!((reads - (1.0 - hit(&c) / 100.0)).abs() < 1e-3, "{c:?}");
    assert!(hit(&row("ycsb-d")) > hit(&c));
    assert!(row("ycsb-e")[5].contains("scans, not bounded"));
}

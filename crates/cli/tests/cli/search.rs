//! `cosine search` (JSON and human answers, targets, its bad input) and `cosine export rocksdb`.

use super::*;

#[test]
fn search_answers_within_budget_and_writes_a_design() {
    let dir = std::env::temp_dir().join(format!("cosine-search-test-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let design_out = dir.join("design.json");
    let plot = dir.join("frontier.svg");
    let out = cosine(&[
        "search",
        "--budget",
        "5000",
        "--workload",
        "ycsb-b",
        "--providers",
        "aws,azure",
        "--max-vms",
        "6",
        "--entries",
        "1000000000",
        "--json",
        "--design-out",
        design_out.to_str().unwrap(),
        "--plot",
        plot.to_str().unwrap(),
    ]);
    let v = json(&out);
    let best = &v["best"];
    assert!(best["cost"]["total_usd"].as_f64().unwrap() <= 5000.0);
    assert!(["aws", "azure"].contains(&best["provider"].as_str().unwrap()));
    let frontier = v["frontier"].as_array().unwrap();
    assert!(frontier.len() > 3);
    for w in frontier.windows(2) {
        assert!(w[0]["cost"]["total_usd"].as_f64() < w[1]["cost"]["total_usd"].as_f64());
        assert!(
            w[0]["throughput"].as_f64() < w[1]["throughput"].as_f64(),
            "more money never buys less"
        );
    }
    assert_eq!(v["baselines"].as_array().unwrap().len(), 3);
    // the written design is one the engine reads
    let d =
        cosine_design::Design::from_json(&std::fs::read_to_string(&design_out).unwrap()).unwrap();
    assert_eq!(
        serde_json::to_value(&d).unwrap()["size_ratio"],
        best["parts"][0]["design"]["design"]["size_ratio"]
    );
    let svg = std::fs::read_to_string(&plot).unwrap();
    assert!(svg.starts_with("<svg") && svg.contains("RocksDB"));
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn search_human_output_and_targets() {
    let out = cosine(&[
        "search",
        "--budget",
        "3000",
        "--workload",
        "ycsb-c",
        "--providers",
        "gcp",
        "--max-vms",
        "4",
        "--entries",
        "100000000",
        "--throughput-target",
        "100000000",
    ]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    for needle in [
        "best within budget",
        "fixed designs with the same money",
        "RocksDB",
        "cheapest configuration that meets",
        "searched",
        "Cosine / RocksDB = ",
    ] {
        assert!(text.contains(needle), "missing '{needle}' in:\n{text}");
    }
    // each fixed design's margin is printed as φ times the rest, and the three figures multiply out
    for line in text.lines().filter(|l| l.contains(" = phi ")) {
        let num = |after: &str| -> f64 {
            let rest = &line[line.find(after).unwrap() + after.len()..];
            rest.split([' ', ';']).next().unwrap().parse().unwrap()
        };
        let (total, phi, rest) = (num(" = "), num(" = phi "), num("(I/Os, volumes, VMs) "));
        assert!((phi * rest - total).abs() <= 0.01 * total + 0.01, "{line}");
    }
    // what a machine delivers, in units a person reads: each VM's bound and use of its volume, the memory kept
    // for the operating system, the time a restart takes
    for needle in [
        "priced within each VM's volume, cores and memory",
        "kept for the OS and the engine",
        "each VM: ",
        "ops/s at most, bound by ",
        "recovers from a restart in ",
    ] {
        assert!(text.contains(needle), "missing '{needle}' in:\n{text}");
    }
    // every VM of the answer uses at most all of its volume
    for line in text.lines().filter(|l| l.contains("each VM: ")) {
        let used = &line[line.find("(IOPS ").unwrap()..];
        let pct = |after: &str| -> f64 {
            let rest = &used[used.find(after).unwrap() + after.len()..];
            rest.split('%').next().unwrap().parse().unwrap()
        };
        assert!(
            pct("(IOPS ") <= 100.0 && pct(", bandwidth ") <= 100.0,
            "{line}"
        );
    }
}

#[test]
fn search_bad_physical_input() {
    let search = |extra: &[&str]| {
        let mut args = vec!["search", "--budget", "100", "--workload", "ycsb-a"];
        args.extend_from_slice(extra);
        args.into_iter().map(String::from).collect::<Vec<_>>()
    };
    for (extra, needle) in [
        (&["--max-recovery", "0"][..], "--max-recovery"),
        (&["--max-recovery", "-3"][..], "--max-recovery"),
        (&["--throughput", "fast"][..], "--throughput"),
        (&["--in-flight", "0"][..], "--in-flight"),
        (&["--volume-latency-us", "0"][..], "--volume-latency-us"),
        (&["--os-reserve", "lots"][..], "--os-reserve"),
        (&["--os-reserve", "512,1.5"][..], "--os-reserve"),
        (&["--cpu", "/nonexistent/cpu.json"][..], "cannot read"),
    ] {
        let args = search(extra);
        fails_with(&args.iter().map(String::as_str).collect::<Vec<_>>(), needle);
    }
    // a machine's catalog whose disk has no IOPS: one clear error naming the field
    let dir = std::env::temp_dir().join(format!("cosine-local-cat-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("machine.json");
    let catalog = serde_json::json!({
        "schema": "cosine-local-machine/1", "as_of": "2026-12-07", "description": "test",
        "hours_per_month": 730.0,
        "vm": {"name": "local", "vcpus": 2, "memory_bytes": 268435456u64, "hourly_usd": 1.0},
        "volume": {"name": "vda", "iops": 0.0, "mibps": 400.0, "read_latency_us": 100.0, "block_bytes": 4096},
        "os_reserve": {"bytes": 0.0, "share": 0.0}
    });
    std::fs::write(&path, catalog.to_string()).unwrap();
    fails_with(
        &search(&["--catalog", path.to_str().unwrap()])
            .iter()
            .map(String::as_str)
            .collect::<Vec<_>>(),
        "volume.iops",
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn search_bad_input() {
    fails_with(
        &["search", "--budget", "-5", "--workload", "ycsb-a"],
        "budget",
    );
    fails_with(
        &[
            "search",
            "--budget",
            "20000",
            "--workload",
            "ycsb-a",
            "--phi",
            "nope",
        ],
        "cannot read nope",
    );
    fails_with(
        &["search", "--budget", "0", "--workload", "ycsb-a"],
        "budget",
    );
    fails_with(
        &["search", "--budget", "100", "--workload", "ycsb-z"],
        "unknown workload",
    );
    fails_with(
        &[
            "search",
            "--budget",
            "100",
            "--workload",
            "ycsb-a",
            "--providers",
            "ibm",
        ],
        "unknown provider",
    );
    fails_with(
        &[
            "search",
            "--budget",
            "100",
            "--workload",
            "ycsb-a",
            "--sla",
            "bogus",
        ],
        "unknown sla",
    );
    fails_with(
        &[
            "search",
            "--budget",
            "100",
            "--workload",
            "ycsb-a",
            "--rho",
            "-1",
        ],
        "rho",
    );
    fails_with(
        &[
            "search",
            "--budget",
            "100",
            "--workload",
            "ycsb-a",
            "--catalog",
            "/nonexistent.json",
        ],
        "cannot read catalog",
    );
    fails_with(
        &["compare", "--workload", "ycsb-a", "--budgets", "100,abc"],
        "not a number",
    );
}

#[test]
fn export_rocksdb_writes_an_options_file_and_refuses_what_rocksdb_cannot_run() {
    // to standard output: the sections RocksDB's loader needs (the round trip through RocksDB itself is
    // cosine-peers' test), the notes where the mapping is approximate as comments
    let out = cosine(&[
        "export",
        "rocksdb",
        "--design",
        &example("design-lsm.json"),
        "--entries",
        "100000000",
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8(out.stdout).unwrap();
    for line in [
        "[Version]",
        "[DBOptions]",
        "[CFOptions \"default\"]",
        "[TableOptions/BlockBasedTable \"default\"]",
        "  compaction_style=kCompactionStyleLevel",
        "  compression=kNoCompression",
    ] {
        assert!(text.lines().any(|l| l == line), "{line} missing:\n{text}");
    }
    assert!(text
        .lines()
        .any(|l| l.starts_with("# approximate: Bloom filters")));
    // B-tree-like, LSH and hybrid designs: one line, exit 2
    for name in ["design-btree.json", "design-lsh.json", "design-hybrid.json"] {
        fails_with(
            &[
                "export",
                "rocksdb",
                "--design",
                &example(name),
                "--entries",
                "1000",
            ],
            "no RocksDB equivalent",
        );
    }
    fails_with(
        &["export", "rocksdb", "--design", &example("design-lsm.json")],
        "--entries",
    );
    fails_with(
        &[
            "export",
            "rocksdb",
            "--design",
            &example("design-lsm.json"),
            "--entries",
            "0",
        ],
        "at least 1",
    );
    // from the search: the best configuration's design, for its entries per VM
    let dir = std::env::temp_dir().join(format!("cosine-export-test-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let options = dir.join("OPTIONS-000001");
    let search = |workload: &str, entries: &str, throughput: &str| {
        cosine(&[
            "search",
            "--throughput",
            throughput,
            "--budget",
            "3000",
            "--workload",
            workload,
            "--providers",
            "aws",
            "--max-vms",
            "4",
            "--entries",
            entries,
            "--json",
            "--rocksdb-options-out",
            options.to_str().unwrap(),
        ])
    };
    // (an update-heavy Endure workload over 10^10 entries: the search picks an LSM design; YCSB-C did until the
    // model priced the buffer's hits of hot keys under skew, since when a B-tree-like design wins it)
    let v = json(&search("endure-w11", "10000000000", "physical"));
    assert_eq!(v["best"]["parts"][0]["design"]["class"], "lsm");
    let text = std::fs::read_to_string(&options).unwrap();
    let t = v["best"]["parts"][0]["design"]["design"]["size_ratio"]
        .as_u64()
        .unwrap();
    assert!(
        text.contains(&format!("max_bytes_for_level_multiplier={t}.000000"))
            || text.contains(&format!("max_merge_width={t};")),
        "{text}"
    );
    // a B-tree-like pick (YCSB-C at 10^8 entries priced by the paper's Eq. 3, where a B-tree holding the
    // data in its buffer wins): refused, one line
    let _ = std::fs::remove_file(&options);
    let out = search("ycsb-c", "100000000", "paper");
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("btree design has no RocksDB equivalent"),
        "{err}"
    );
    assert!(!options.exists());
    let _ = std::fs::remove_dir_all(&dir);
}

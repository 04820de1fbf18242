//! `cosine profile` and `cosine verify`: this machine measured into a catalog of one VM, the search priced on
//! it, and verify's plan (what it would run). The runs themselves go through cosine-peers (`.ci/run` runs a
//! tiny one; BENCHMARKS.md the full ones).

use super::*;

#[test]
fn a_quick_profile_writes_a_catalog_the_search_and_verify_price() {
    let dir = std::env::temp_dir().join(format!("cosine-profile-test-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let out = cosine(&[
        "profile",
        "--quick",
        "--memory",
        "134217728",
        "--out",
        dir.to_str().unwrap(),
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8_lossy(&out.stdout);
    for needle in [
        "in flight:",
        "sequential: write",
        "our engine's CPU",
        "wrote ",
    ] {
        assert!(text.contains(needle), "missing '{needle}' in:\n{text}");
    }
    let catalog = dir.join("machine.json");
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&catalog).unwrap()).unwrap();
    assert_eq!(v["vm"]["memory_bytes"], 134217728);
    assert!(v["volume"]["iops"].as_f64().unwrap() > 0.0);
    assert!(v["volume"]["mibps"].as_f64().unwrap() > 0.0);
    assert!(v["engine_overhead"]["share"].as_f64().unwrap() >= 0.0);
    let cpu: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("cpu.json")).unwrap()).unwrap();
    assert!(cpu["entries"]["lsm"]["lookup_us"].as_f64().unwrap() > 0.0);
    // the search prices this machine as it prices a cloud VM
    let cat = catalog.to_str().unwrap();
    let cpu_path = dir.join("cpu.json");
    let s = json(&cosine(&[
        "search",
        "--budget",
        "1000",
        "--workload",
        "ycsb-c",
        "--entries",
        "2000000",
        "--catalog",
        cat,
        "--cpu",
        cpu_path.to_str().unwrap(),
        "--max-vms",
        "1",
        "--json",
    ]));
    let part = &s["best"]["parts"][0];
    assert_eq!(part["vm"], "local");
    let design = &part["design"]["design"];
    let m = ["buffer_bytes", "filter_bytes", "fence_bytes", "cache_bytes"]
        .iter()
        .map(|k| design[k].as_u64().unwrap_or(0))
        .sum::<u64>();
    assert!(m < 134217728, "a design of {m} bytes on 128 MiB");
    assert!(part["design"]["delivered"]["iops_used"].as_f64().unwrap() <= 1.0);
    // verify's plan: the pick and the next designs, priced; RocksDB's fixed design beside them
    let plan = json(&cosine(&[
        "verify",
        "--workload",
        "ycsb-c",
        "--records",
        "600000",
        "--ops",
        "20000",
        "--memory-cap",
        "134217728",
        "--catalog",
        cat,
        "--designs",
        "3",
        "--plan-only",
        "--json",
    ]));
    let designs = plan["designs"].as_array().unwrap();
    assert_eq!(designs.len(), 3);
    assert!(designs[0]["label"].as_str().unwrap().contains("(pick)"));
    assert!(designs.windows(2).all(|d| d[0]["label"] != d[1]["label"]));
    assert!(designs
        .iter()
        .all(|d| d["priced_ops_per_s"].as_f64().unwrap() > 0.0));
    assert!(plan["rocksdb"]["priced_ops_per_s"].as_f64().unwrap() > 0.0);
    // bad input: one clear line
    fails_with(
        &[
            "verify",
            "--workload",
            "ycsb-z",
            "--catalog",
            cat,
            "--plan-only",
        ],
        "ycsb-a .. ycsb-f",
    );
    fails_with(
        &[
            "verify",
            "--workload",
            "ycsb-c",
            "--catalog",
            "/nonexistent.json",
        ],
        "cosine profile",
    );
    fails_with(
        &[
            "verify",
            "--workload",
            "ycsb-c",
            "--catalog",
            cat,
            "--memory-cap",
            "1000",
        ],
        "--memory-cap",
    );
    let _ = std::fs::remove_dir_all(&dir);
}

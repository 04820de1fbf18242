//! `cosine learn` through the real binary: a tiny collection into a repository, resumed, and bad input.

use std::process::{Command, Output};

fn cosine(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_cosine"))
        .args(args)
        .output()
        .expect("run cosine")
}

fn fails_with(args: &[&str], needle: &str) {
    let out = cosine(args);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
    assert_eq!(err.trim_end().lines().count(), 1, "{args:?}: {err}");
    assert!(err.contains(needle), "{args:?}: '{needle}' not in: {err}");
}

/// Collects a tiny repository of our engine at 1 MiB of memory into `repo` (the test fails if it fails).
fn collect_tiny(repo: &std::path::Path, workloads: &str, configs: &str, records: &str, ops: &str) {
    let out = cosine(&[
        "learn",
        "collect",
        "--workloads",
        workloads,
        "--configs",
        configs,
        "--records",
        records,
        "--ops",
        ops,
        "--memory",
        "1048576",
        "--repo",
        repo.to_str().unwrap(),
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn collect_appends_runs_and_resumes() {
    let dir = tempfile::tempdir().unwrap();
    let repo = dir.path().join("repo");
    let repo_s = repo.to_str().unwrap();
    let args = [
        "learn",
        "collect",
        "--workloads",
        "rw90-1k,upd-4k",
        "--configs",
        "3",
        "--records",
        "2000",
        "--ops",
        "500",
        "--memory",
        "1048576",
        "--repo",
        repo_s,
    ];
    let out = cosine(&args);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("6 runs measured, 0 already"), "{text}");
    let lines: Vec<serde_json::Value> = std::fs::read_to_string(repo.join("runs.jsonl"))
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), 6);
    // the defaults and the model's pick come first, then samples; every run verified and counted
    let sources: Vec<&str> = lines
        .iter()
        .map(|l| l["source"].as_str().unwrap())
        .collect();
    assert_eq!(&sources[..4], ["default", "default", "model", "model"]);
    assert_eq!(&sources[4..], ["lhs", "lhs"]);
    for l in &lines {
        assert_eq!(l["engine"], "cosine");
        assert!(l["outcome"]["throughput"].as_f64().unwrap() > 0.0);
        // the outcome's I/Os are the run's read-path and background blocks the engine counted, and reads of
        // twice the memory's data reach blocks
        let m = &l["metrics"];
        let read = m["run.read_ios_per_op"].as_f64().unwrap();
        let background = m["run.background_ios_per_op"].as_f64().unwrap();
        let ios = l["outcome"]["ios_per_op"].as_f64().unwrap();
        assert!((ios - read - background).abs() < 1e-9, "{l}");
        if l["workload"] == "rw90-1k" {
            assert!(read > 0.0, "{l}");
        }
        // (below 1 where the buffer absorbed overwrites, or still held writes when the run ended)
        assert!(
            l["metrics"]["write_amplification"].as_f64().unwrap() > 0.0,
            "{l}"
        );
        assert!(l["knobs"]["size_ratio"].as_i64().unwrap() >= 2);
        assert!(l["settings"]["buffer_bytes"].as_u64().unwrap() > 0);
    }
    // the same command again measures nothing
    let again = cosine(&args);
    let text = String::from_utf8_lossy(&again.stdout);
    assert!(text.contains("0 runs measured, 6 already"), "{text}");
    // one more configuration: one more run per workload
    let mut more = args.to_vec();
    more[5] = "4";
    let text = String::from_utf8_lossy(&cosine(&more).stdout).to_string();
    assert!(text.contains("2 runs measured, 6 already"), "{text}");
}

#[test]
fn collect_bad_input() {
    let dir = tempfile::tempdir().unwrap();
    let r = dir.path().join("r");
    let r = r.to_str().unwrap();
    fails_with(
        &["learn", "collect", "--repo", r, "--workloads", "nope"],
        "unknown workload 'nope'",
    );
    fails_with(
        &["learn", "collect", "--repo", r, "--configs", "0"],
        "--configs must be at least 1",
    );
    fails_with(
        &["learn", "collect", "--repo", r, "--memory", "10"],
        "--memory must be at least",
    );
    fails_with(
        &["learn", "collect", "--repo", r, "--time-budget", "0"],
        "--time-budget",
    );
    fails_with(
        &["learn", "collect", "--repo", r, "--engine", "rocksdb"],
        "built without RocksDB",
    );
    fails_with(&["learn", "collect"], "--repo");
    // a repository with a corrupt line is an error with its line, not a silent skip
    std::fs::create_dir_all(dir.path().join("bad")).unwrap();
    std::fs::write(dir.path().join("bad/runs.jsonl"), "garbage\n{}\n").unwrap();
    fails_with(
        &[
            "learn",
            "collect",
            "--repo",
            dir.path().join("bad").to_str().unwrap(),
            "--workloads",
            "rw90-1k",
            "--configs",
            "1",
            "--records",
            "500",
            "--ops",
            "100",
        ],
        "line 1",
    );
}

/// The whole pipeline on a tiny repository collected here: structure and determinism, not improvement (a
/// repository this small teaches the surrogate little; the rank-correlation floor is lowered for it).
#[test]
fn tune_runs_end_to_end_on_a_tiny_repository() {
    let dir = tempfile::tempdir().unwrap();
    let repo = dir.path().join("repo");
    let repo_s = repo.to_str().unwrap();
    collect_tiny(&repo, "rw90-1k,rw10-1k,upd-1k,rw50-4k", "12", "1000", "300");
    let tune = |seed: &str, name: &str, extra: &[&str]| {
        let design = dir.path().join(format!("{name}.json"));
        let report = dir.path().join(format!("{name}-report.json"));
        let mut args = vec![
            "learn",
            "tune",
            "--repo",
            repo_s,
            "--target",
            "ycsb-a",
            "--probe",
            "3",
            "--verify",
            "2",
            "--epochs",
            "20",
            "--generations",
            "15",
            "--min-rank-correlation=-1",
            "--seed",
            seed,
            "--out",
            design.to_str().unwrap(),
            "--report",
            report.to_str().unwrap(),
        ];
        args.extend_from_slice(extra);
        let out = cosine(&args);
        let text = String::from_utf8_lossy(&out.stdout).to_string();
        assert!(
            out.status.success(),
            "{text}{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let design: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(design).unwrap()).unwrap();
        let report: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(report).unwrap()).unwrap();
        (text, design, report)
    };
    let (text, design, report) = tune("1", "a", &[]);
    // the repository's scale and memory are the target's
    assert!(
        text.contains("ycsb-a (1000 records, 300 operations) from 48 runs"),
        "{text}"
    );
    assert!(text.contains("workload matching over"), "{text}");
    for w in ["rw90-1k", "rw10-1k", "upd-1k", "rw50-4k"] {
        assert!(
            text.contains(w),
            "{w} missing from the distance table: {text}"
        );
    }
    let matches = report["matches"].as_array().unwrap();
    assert_eq!(matches.len(), 4);
    let weights: f64 = matches.iter().map(|m| m["weight"].as_f64().unwrap()).sum();
    assert!((weights - 1.0).abs() < 1e-9, "{weights}");
    assert!(matches
        .windows(2)
        .all(|m| m[0]["distance"].as_f64() <= m[1]["distance"].as_f64()));
    assert_eq!(report["probes"].as_array().unwrap().len(), 3);
    let candidates = report["candidates"].as_array().unwrap();
    assert_eq!(candidates.len(), 2);
    for c in candidates {
        assert_eq!(c["run"]["workload"], "ycsb-a");
        assert_eq!(c["measured_ratios"].as_array().unwrap().len(), 5);
        assert!(c["predicted_fitness"].as_f64().is_some());
    }
    // the analytical model's pick for the target is measured too, on the target
    let model = &report["model"];
    assert_eq!(model["source"], "model", "{model}");
    assert_eq!(model["run"]["workload"], "ycsb-a");
    assert!(model["predicted_fitness"].is_null());
    assert!(
        text.lines()
            .any(|l| l.starts_with("  model's pick ") && l.contains(" measured ")),
        "{text}"
    );
    // the written design is the best configuration measured on the target, probes and the model's pick
    // included, and keeps the memory budget
    let chosen = &report["chosen"];
    assert_eq!(design, chosen["run"]["settings"]);
    let best_score = candidates
        .iter()
        .chain(report["probes"].as_array().unwrap())
        .chain(std::iter::once(model))
        .map(|c| c["measured_score"].as_f64().unwrap())
        .fold(f64::NEG_INFINITY, f64::max);
    assert_eq!(chosen["measured_score"].as_f64().unwrap(), best_score);
    let memory: u64 = ["buffer_bytes", "filter_bytes", "fence_bytes"]
        .iter()
        .map(|f| design[f].as_u64().unwrap())
        .sum::<u64>()
        + design["cache_bytes"].as_u64().unwrap_or(0);
    assert!(memory <= 1048576 + 4096, "{memory}");
    // the probes come from the repository alone: the same on every call
    let (_, _, again) = tune("1", "b", &[]);
    // scored by I/Os alone: the same structure
    let (_, _, ios) = tune("1", "c", &["--objective", "ios"]);
    assert_eq!(ios["candidates"].as_array().unwrap().len(), 2);
    // RTune's pipeline alone: the model's pick is not measured, and the choice is among the rest
    let (text, _, pure) = tune("1", "d", &["--no-model-probe"]);
    assert!(pure["model"].is_null(), "{}", pure["model"]);
    assert!(!text.contains("model's pick"), "{text}");
    let best_measured = pure["candidates"]
        .as_array()
        .unwrap()
        .iter()
        .chain(pure["probes"].as_array().unwrap())
        .map(|c| c["measured_score"].as_f64().unwrap())
        .fold(f64::NEG_INFINITY, f64::max);
    assert_eq!(
        pure["chosen"]["measured_score"].as_f64().unwrap(),
        best_measured
    );
    let ids = |r: &serde_json::Value| -> Vec<String> {
        r["probes"]
            .as_array()
            .unwrap()
            .iter()
            .map(|p| p["config"].as_str().unwrap().to_string())
            .collect()
    };
    assert_eq!(ids(&report), ids(&again));
    // the target never enters the repository
    let lines = std::fs::read_to_string(repo.join("runs.jsonl"))
        .unwrap()
        .lines()
        .count();
    assert_eq!(lines, 48);
    // a repository with too few configurations to check the surrogate on is refused, with what to do
    let small = dir.path().join("small");
    collect_tiny(&small, "rw90-1k,rw10-1k", "4", "500", "100");
    fails_with(
        &[
            "learn",
            "tune",
            "--repo",
            small.to_str().unwrap(),
            "--target",
            "ycsb-a",
            "--out",
            dir.path().join("x.json").to_str().unwrap(),
            "--probe",
            "2",
            "--verify",
            "1",
        ],
        "collect more configurations",
    );
}

#[test]
fn tune_bad_input() {
    let dir = tempfile::tempdir().unwrap();
    let empty = dir.path().join("empty");
    let e = empty.to_str().unwrap();
    let out = dir.path().join("o.json");
    let o = out.to_str().unwrap();
    fails_with(
        &[
            "learn", "tune", "--repo", e, "--target", "ycsb-a", "--out", o,
        ],
        "holds no runs",
    );
    fails_with(
        &[
            "learn", "tune", "--repo", e, "--target", "ycsb-a", "--out", o, "--verify", "0",
        ],
        "--verify must be at least 1",
    );
    fails_with(
        &["learn", "tune", "--repo", e, "--target", "ycsb-a"],
        "--out",
    );
    fails_with(
        &[
            "learn",
            "evaluate",
            "--repo",
            e,
            "--min-rank-correlation",
            "2",
        ],
        "--min-rank-correlation must be in [-1, 1]",
    );
    // a target that is one of the repository's workloads is refused
    let repo = dir.path().join("r");
    let r = repo.to_str().unwrap();
    collect_tiny(&repo, "rw90-1k,rw10-1k", "1", "500", "100");
    fails_with(
        &[
            "learn", "tune", "--repo", r, "--target", "rw90-1k", "--out", o,
        ],
        "must be held out",
    );
    fails_with(
        &["learn", "tune", "--repo", r, "--target", "nope", "--out", o],
        "unknown target 'nope'",
    );
}

/// The held-out evaluation on a tiny repository: every method's pick measured side by side, the table and the
/// JSON, and the table printed again from the JSON.
#[test]
fn evaluate_runs_every_method_on_a_tiny_repository() {
    let dir = tempfile::tempdir().unwrap();
    let repo = dir.path().join("repo");
    let repo_s = repo.to_str().unwrap();
    collect_tiny(&repo, "rw90-1k,rw10-1k,upd-1k,rw50-4k", "12", "1000", "300");
    let json = dir.path().join("eval.json");
    let out = cosine(&[
        "learn",
        "evaluate",
        "--repo",
        repo_s,
        "--targets",
        "ycsb-a",
        "--seeds",
        "1",
        "--repeats",
        "1",
        "--probe",
        "3",
        "--verify",
        "1",
        "--epochs",
        "10",
        "--generations",
        "5",
        "--min-rank-correlation=-1",
        "--json-out",
        json.to_str().unwrap(),
    ]);
    let text = String::from_utf8_lossy(&out.stdout).to_string();
    assert!(
        out.status.success(),
        "{text}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // what tune returned, counted over the one seed
    let returned = text
        .lines()
        .skip_while(|l| !l.starts_with("what tune returned"))
        .nth(1)
        .unwrap_or_default()
        .to_string();
    let counts: Vec<u32> = returned
        .split(|c: char| c == '/' || c.is_whitespace())
        .filter_map(|w| w.parse().ok())
        .collect();
    assert_eq!(counts.iter().sum::<u32>(), 1, "{text}");
    let doc: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    let picks = doc["results"][0]["picks"].as_array().unwrap();
    assert_eq!(picks.len(), 8);
    // the defaults against their own median score exactly 1; a method either has a pick or says why not
    assert_eq!(picks[0]["method"], "defaults");
    assert_eq!(picks[0]["score"].as_f64().unwrap(), 1.0);
    let methods: Vec<&str> = picks
        .iter()
        .map(|p| p["method"].as_str().unwrap())
        .collect();
    assert_eq!(
        methods,
        [
            "defaults",
            "model",
            "tune",
            "best-probe",
            "rtune",
            "tune+model",
            "nearest",
            "random"
        ]
    );
    for p in picks {
        assert!(
            p["failed"].is_string() || p["score"].as_f64().is_some_and(|s| s > 0.0),
            "{p}"
        );
    }
    // with no rank-correlation floor, every tuning runs
    for m in ["tune", "rtune", "tune+model", "nearest"] {
        let p = picks.iter().find(|p| p["method"] == m).unwrap();
        assert!(p["failed"].is_null(), "{p}");
    }
    let random = picks.iter().find(|p| p["method"] == "random").unwrap();
    assert_eq!(
        random["tuning_runs"], 6,
        "random gets tune's budget: defaults, 3 probes, the model's pick, 1 candidate"
    );
    let runs = |m: &str| picks.iter().find(|p| p["method"] == m).unwrap()["tuning_runs"].clone();
    assert_eq!(runs("tune"), 6);
    assert_eq!(runs("rtune"), 5, "rtune: defaults, 3 probes, 1 candidate");
    // the table again, from the JSON alone
    let again = cosine(&[
        "learn",
        "evaluate",
        "--repo",
        "unused",
        "--table-from",
        json.to_str().unwrap(),
    ]);
    assert!(again.status.success());
    let table = String::from_utf8_lossy(&again.stdout);
    assert!(table.lines().any(|l| l.starts_with("ycsb-a")), "{table}");
}

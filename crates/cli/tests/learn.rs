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
        assert!(l["outcome"]["ios_per_op"].as_f64().unwrap() >= 0.0);
        assert!(
            l["metrics"]["write_amplification"].as_f64().unwrap() >= 1.0,
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
        "not built yet",
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

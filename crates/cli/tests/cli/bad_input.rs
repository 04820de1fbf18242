//! Bad input of every kind, across the commands: one line on stderr and exit code 2.

use super::*;

#[test]
fn bad_input_is_one_line_and_exit_2() {
    fails_with(&["validate", "--loads", "0"], "--loads");
    fails_with(&["validate", "--read-only-loads", "0"], "--read-only-loads");
    fails_with(&["tune", "--workload", "ycsb-z"], "unknown workload");
    fails_with(&["tune", "--workload", "endure-w1", "--rho", "-1"], "rho");
    fails_with(&["tune", "--workload", "1.5,-0.5,0,0"], "outside [0, 1]");
    fails_with(&["tune", "--workload", "0.5,0.5,0.5,0.5"], "sum");
    fails_with(&["tune", "--workload", "0.5,0.5"], "four");
    fails_with(&["tune", "--workload", "a,b,c,d"], "not a number");
    fails_with(
        &["tune", "--workload", "endure-w1", "--entries", "-5"],
        "entries",
    );
    fails_with(
        &[
            "tune",
            "--workload",
            "endure-w1",
            "--bits-per-entry",
            "0.01",
        ],
        "buffer",
    );
    fails_with(&["tune", "--workload", "endure-w1", "--rho", "abc"], "rho");
    fails_with(
        &["uncertainty", "--expected", "nope", "--rho", "1"],
        "unknown workload",
    );
    fails_with(
        &["uncertainty", "--expected", "endure-w1", "--rho", "-0.5"],
        "rho",
    );
    fails_with(
        &[
            "cost",
            "--design",
            "/nonexistent/design.json",
            "--workload",
            "ycsb-a",
        ],
        "cannot read",
    );
    fails_with(
        &[
            "cost",
            "--design",
            &example("design-lsm.json"),
            "--workload",
            "ycsb-q",
        ],
        "unknown workload",
    );
    let malformed = tmp_file("malformed.json", "{\"mix\": {\"lookup\": 1.0");
    fails_with(
        &[
            "cost",
            "--design",
            &example("design-lsm.json"),
            "--workload",
            &malformed,
        ],
        "malformed workload",
    );
    let fraction = tmp_file(
        "fraction.json",
        r#"{"mix": {"lookup": 1.2, "insert": -0.2}}"#,
    );
    fails_with(
        &[
            "cost",
            "--design",
            &example("design-lsm.json"),
            "--workload",
            &fraction,
        ],
        "outside [0, 1]",
    );
    let sum = tmp_file("sum.json", r#"{"mix": {"lookup": 0.5, "insert": 0.6}}"#);
    fails_with(
        &[
            "cost",
            "--design",
            &example("design-lsm.json"),
            "--workload",
            &sum,
        ],
        "sum",
    );
    let design = tmp_file(
        "k.json",
        r#"{"size_ratio": 4, "hot_runs": 4, "cold_runs": 1, "buffer_bytes": 1048576, "filter_bytes": 0, "fence_bytes": 0}"#,
    );
    fails_with(
        &["cost", "--design", &design, "--workload", "ycsb-a"],
        "hot_runs",
    );
    let neg = tmp_file(
        "neg.json",
        r#"{"size_ratio": 4, "hot_runs": 1, "cold_runs": 1, "buffer_bytes": -1, "filter_bytes": 0, "fence_bytes": 0}"#,
    );
    fails_with(
        &["cost", "--design", &neg, "--workload", "ycsb-a"],
        "non-negative",
    );
    let truncated = tmp_file("trunc.json", r#"{"size_ratio": 4, "hot_ru"#);
    fails_with(
        &["cost", "--design", &truncated, "--workload", "ycsb-a"],
        "malformed design",
    );
    fails_with(&["frobnicate"], "unrecognized subcommand");
    let _ = std::fs::remove_dir_all(std::path::Path::new(&malformed).parent().unwrap());
}

//! Runs the real `cosine` binary: valid commands print what the README promises, bad input of every kind gets
//! one clear line on stderr and exit code 2.
//!
//! One module per concept: the model's commands, bad input, the search and its exports, the YCSB harness.

mod bad_input;
mod bench;
mod machine;
mod model;
mod search;

use std::path::PathBuf;
use std::process::{Command, Output};

fn cosine(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_cosine"))
        .args(args)
        .output()
        .expect("run cosine")
}

fn examples() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../examples")
}

fn example(name: &str) -> String {
    examples().join(name).to_string_lossy().into_owned()
}

fn json(out: &Output) -> serde_json::Value {
    assert!(
        out.status.success(),
        "stderr: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("stdout is one JSON document")
}

/// Exit code 2 and exactly one line on stderr that mentions `needle`.
fn fails_with(args: &[&str], needle: &str) {
    let out = cosine(args);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
    assert_eq!(
        err.trim_end().lines().count(),
        1,
        "{args:?}: one line expected, got: {err}"
    );
    assert!(
        err.to_lowercase().contains(&needle.to_lowercase()),
        "{args:?}: '{needle}' not in: {err}"
    );
    assert!(!err.contains("panicked"), "{err}");
}

fn tmp_file(name: &str, text: &str) -> String {
    let dir = std::env::temp_dir().join(format!("cosine-cli-test-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let p = dir.join(name);
    std::fs::write(&p, text).unwrap();
    p.to_string_lossy().into_owned()
}

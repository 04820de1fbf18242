//! `cosine generate`: generated engines build, start and serve (deployments of several engines: `deploy.rs`).
//! The projects build into one shared target directory so that the engine crates compile once.

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Duration;

mod common;
use common::{cosine, free_port, root, shared_target, Proc};

fn build(project: &Path) {
    let status = Command::new(env!("CARGO"))
        .args(["build", "-q", "--manifest-path"])
        .arg(project.join("Cargo.toml"))
        .env("CARGO_TARGET_DIR", shared_target())
        .status()
        .unwrap();
    assert!(status.success(), "building {}", project.display());
}

/// Starts a generated engine; returns it and its first line (what it serves, with its parts).
fn start_engine(name: &str, port: u16, data: &Path) -> (Proc, String) {
    let mut child = Command::new(shared_target().join("debug").join(name))
        .args(["--bind", &format!("127.0.0.1:{port}"), "--data"])
        .arg(data)
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut line = String::new();
    BufReader::new(child.stdout.as_mut().unwrap())
        .read_line(&mut line)
        .unwrap();
    assert!(line.contains("serving on"), "{line}");
    (Proc(child), line)
}

fn client(port: u16) -> redis::Connection {
    redis::Client::open(format!("redis://127.0.0.1:{port}/"))
        .unwrap()
        .get_connection_with_timeout(Duration::from_secs(10))
        .unwrap()
}

#[test]
fn generated_lsm_and_btree_engines_build_start_and_round_trip() {
    let dir = tempfile::tempdir().unwrap();
    for (name, design, class, buffer) in [
        (
            "gen-lsm",
            "design-lsm.json",
            "class:lsm",
            "Sorted buffer, Fences index",
        ),
        (
            "gen-btree",
            "design-btree.json",
            "class:btree",
            "Sorted buffer, Fences index",
        ),
        (
            "gen-lsh",
            "design-lsh.json",
            "class:lsh",
            "HashLog buffer, Hash index",
        ),
    ] {
        let out = dir.path().join(name);
        let design = root().join("examples").join(design);
        let o = cosine(&[
            "generate",
            "--design",
            design.to_str().unwrap(),
            "--out",
            out.to_str().unwrap(),
            "--name",
            name,
        ]);
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        let main = std::fs::read_to_string(out.join("src/main.rs")).unwrap();
        assert!(
            main.contains("pub const DESIGN: Design = Design {"),
            "the design is a compile-time constant"
        );
        assert!(
            main.contains("pub const PARTS: Parts = Parts::of(&DESIGN);"),
            "the parts are picked at compile time by the engine's factory"
        );
        assert!(out.join("README.md").exists() && out.join(format!("{name}.conf")).exists());
        build(&out);
        let port = free_port();
        let (_engine, banner) = start_engine(name, port, &dir.path().join(format!("{name}-data")));
        assert!(banner.contains(buffer), "{name} runs other parts: {banner}");
        let mut c = client(port);
        for i in 0..500 {
            let _: () = redis::cmd("SET")
                .arg(format!("k{i}"))
                .arg(format!("v{i}"))
                .query(&mut c)
                .unwrap();
        }
        for i in (0..500).step_by(37) {
            let v: Option<String> = redis::cmd("GET")
                .arg(format!("k{i}"))
                .query(&mut c)
                .unwrap();
            assert_eq!(v, Some(format!("v{i}")));
        }
        let info: String = redis::cmd("INFO").query(&mut c).unwrap();
        assert!(info.contains(class), "{info}");
    }
    // refusing to overwrite
    let o = cosine(&[
        "generate",
        "--design",
        root().join("examples/design-lsm.json").to_str().unwrap(),
        "--out",
        dir.path().join("gen-lsm").to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(2));
}

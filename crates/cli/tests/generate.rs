//! `cosine generate`: generated engines build, start and serve; a three-shard deployment behind twemproxy
//! (nutcracker) spreads keys by memory. The projects build into one shared target directory so that the engine
//! crates compile once.

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

fn cosine(args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_cosine"))
        .args(args)
        .output()
        .unwrap()
}

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .canonicalize()
        .unwrap()
}

fn shared_target() -> PathBuf {
    PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("generated")
}

fn build(project: &Path) {
    let status = Command::new(env!("CARGO"))
        .args(["build", "-q", "--manifest-path"])
        .arg(project.join("Cargo.toml"))
        .env("CARGO_TARGET_DIR", shared_target())
        .status()
        .unwrap();
    assert!(status.success(), "building {}", project.display());
}

struct Proc(Child);

impl Drop for Proc {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
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

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
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

#[test]
fn three_shards_behind_twemproxy_spread_by_memory() {
    if Command::new("nutcracker")
        .arg("--version")
        .output()
        .is_err()
    {
        // CI installs nutcracker, so there the test always runs
        assert!(
            std::env::var_os("CI").is_none(),
            "CI must have nutcracker installed (Debian package nutcracker)"
        );
        eprintln!(
            "nutcracker is not installed (Debian package nutcracker): skipping the twemproxy test"
        );
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let design: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(root().join("examples/design-lsm.json")).unwrap(),
    )
    .unwrap();
    let gib = 1u64 << 30;
    let deployment = serde_json::json!({
        "provider": "aws",
        "shards": [
            {"vm": "r5.large", "memory_bytes": 16 * gib, "design": design},
            {"vm": "r5.xlarge", "memory_bytes": 32 * gib, "design": design},
            {"vm": "r5.2xlarge", "memory_bytes": 64 * gib, "design": design},
        ]
    });
    let dep_path = dir.path().join("deployment.json");
    std::fs::write(&dep_path, deployment.to_string()).unwrap();
    let out = dir.path().join("deploy");
    let (base, proxy) = (free_port().max(20000), free_port());
    let base = if base > 65000 { 30000 } else { base };
    let o = cosine(&[
        "generate",
        "--deployment",
        dep_path.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
        "--name",
        "shard-engine",
        "--base-port",
        &base.to_string(),
        "--proxy-port",
        &proxy.to_string(),
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let yml = std::fs::read_to_string(out.join("nutcracker.yml")).unwrap();
    assert!(
        yml.contains("distribution: ketama")
            && yml.contains(":16 shard-0")
            && yml.contains(":64 shard-2"),
        "{yml}"
    );
    build(&out.join("engines/shard-engine-0"));
    let mut engines = Vec::new();
    for i in 0..3u16 {
        engines.push(start_engine(
            "shard-engine-0",
            base + i,
            &dir.path().join(format!("shard-{i}")),
        ));
    }
    let _proxy = Proc(
        Command::new("nutcracker")
            .arg("-c")
            .arg(out.join("nutcracker.yml"))
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap(),
    );
    // twemproxy closes connections that send commands it does not proxy (the redis crate's CLIENT SETINFO),
    // so the proxy is driven with plain RESP
    let mut c = None;
    for _ in 0..50 {
        if let Ok(s) = std::net::TcpStream::connect(("127.0.0.1", proxy)) {
            c = Some(Resp::new(s));
            break;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    let mut c = c.expect("nutcracker accepts connections");
    for i in 0..10_000 {
        assert_eq!(c.call(&["SET", &format!("user{i}"), &i.to_string()]), "+OK");
    }
    for i in (0..10_000).step_by(101) {
        assert_eq!(c.call(&["GET", &format!("user{i}")]), i.to_string());
    }
    let counts: Vec<i64> = (0..3)
        .map(|i| redis::cmd("DBSIZE").query(&mut client(base + i)).unwrap())
        .collect();
    assert_eq!(counts.iter().sum::<i64>(), 10_000);
    let weights = [16.0, 32.0, 64.0];
    for (n, w) in counts.iter().zip(weights) {
        let expected = 10_000.0 * w / 112.0;
        assert!(
            (*n as f64) > expected * 0.6 && (*n as f64) < expected * 1.4,
            "counts {counts:?} against weights {weights:?}"
        );
    }
}

/// A minimal RESP client: one request, one simple/integer/bulk reply as text.
struct Resp {
    r: BufReader<std::net::TcpStream>,
    w: std::net::TcpStream,
}

impl Resp {
    fn new(s: std::net::TcpStream) -> Self {
        s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
        Resp {
            w: s.try_clone().unwrap(),
            r: BufReader::new(s),
        }
    }

    fn call(&mut self, args: &[&str]) -> String {
        use std::io::{Read, Write};
        let mut req = format!("*{}\r\n", args.len());
        for a in args {
            req.push_str(&format!("${}\r\n{a}\r\n", a.len()));
        }
        self.w.write_all(req.as_bytes()).unwrap();
        let mut line = String::new();
        self.r.read_line(&mut line).unwrap();
        let line = line.trim_end().to_string();
        if let Some(n) = line.strip_prefix('$') {
            let n: i64 = n.parse().unwrap();
            if n < 0 {
                return "(nil)".into();
            }
            let mut buf = vec![0u8; n as usize + 2];
            self.r.read_exact(&mut buf).unwrap();
            return String::from_utf8_lossy(&buf[..n as usize]).into_owned();
        }
        line
    }
}

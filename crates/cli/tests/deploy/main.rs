//! Deployments behind a real twemproxy (nutcracker), started from the scripts `cosine generate --deployment`
//! writes: every shard holds its share of the keys (by memory, on a mixed-VM configuration the search chose),
//! the ring `cosine-deploy` computes routes every key exactly where nutcracker sends it, a deployment on three
//! hosts (loopback addresses 127.0.0.2-4) starts host by host, and growing from three shards to four moves about
//! a quarter of the keys while the proxy keeps serving, losing no write.
//!
//! The harness (scripts, ports, a RESP client, the ring's checks) is here; the tests are in one module per
//! concept: placement, growth, and the hash measurement.

mod growth;
mod measure;
mod placement;

use cosine_deploy::ProxyConfig;
use rand::{Rng, SeedableRng};
use std::io::{BufRead, BufReader, Read, Write};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

#[path = "../common/mod.rs"]
mod common;
use common::{cosine, free_port, have_nutcracker, root, shared_target};

/// The tests pick free ports and start many processes: one at a time, so that no test takes another's port.
static SERIAL: std::sync::Mutex<()> = std::sync::Mutex::new(());

fn serial() -> std::sync::MutexGuard<'static, ()> {
    SERIAL.lock().unwrap_or_else(|e| e.into_inner())
}

/// Runs a generated script; panics with its output when it fails.
fn script(path: &Path, args: &[&str]) {
    let o = Command::new(path)
        .args(args)
        .env("CARGO_TARGET_DIR", shared_target())
        .output()
        .unwrap();
    assert!(
        o.status.success(),
        "{} failed:\n{}\n{}",
        path.display(),
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
}

/// Runs `stop.sh` of a deployment (or a host's directory) when dropped, so a failing test leaves nothing running.
struct Stop(PathBuf);

impl Drop for Stop {
    fn drop(&mut self) {
        let _ = Command::new(self.0.join("stop.sh")).output();
    }
}

fn generate(args: &[&str]) {
    let o = cosine(&[&["generate"], args].concat());
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
}

/// A proxy port: free, and so is the next one (the generated proxy.sh puts nutcracker's stats there).
fn proxy_port(avoid: std::ops::Range<u16>) -> u16 {
    loop {
        let p = free_port();
        if p < 65000
            && !avoid.contains(&p)
            && !avoid.contains(&(p + 1))
            && std::net::TcpListener::bind(("127.0.0.1", p + 1)).is_ok()
        {
            return p;
        }
    }
}

/// Ports for a rehearsal: `n` consecutive free-looking shard ports and a proxy port (with its stats port)
/// outside them.
fn ports(n: u16) -> (u16, u16) {
    loop {
        let base = free_port();
        if base < 60000
            && (0..n).all(|i| std::net::TcpListener::bind(("127.0.0.1", base + i)).is_ok())
        {
            return (base, proxy_port(base..base + n));
        }
    }
}

/// A pipelining RESP client: plain RESP, because twemproxy closes connections that send commands it does not
/// proxy (the redis crate's CLIENT SETINFO).
struct Resp {
    r: BufReader<std::net::TcpStream>,
    w: std::io::BufWriter<std::net::TcpStream>,
}

impl Resp {
    /// A connection to `addr`, authenticated with `password` (a deployment's: its shards and proxy require it).
    fn connect(addr: &str, password: &str) -> Resp {
        let mut c = Resp::open(addr);
        let reply = c.pipeline(&[vec!["AUTH".into(), password.into()]]);
        assert_eq!(reply[0].as_deref(), Some("+OK"), "AUTH at {addr}");
        c
    }

    fn open(addr: &str) -> Resp {
        for _ in 0..100 {
            if let Ok(s) = std::net::TcpStream::connect(addr) {
                s.set_read_timeout(Some(Duration::from_secs(30))).unwrap();
                return Resp {
                    w: std::io::BufWriter::new(s.try_clone().unwrap()),
                    r: BufReader::new(s),
                };
            }
            std::thread::sleep(Duration::from_millis(100));
        }
        panic!("nothing accepts connections on {addr}");
    }

    /// Sends every command, then reads every reply (simple, integer, error or bulk, as text; nil as None).
    fn pipeline(&mut self, cmds: &[Vec<String>]) -> Vec<Option<String>> {
        for c in cmds {
            let mut req = format!("*{}\r\n", c.len());
            for a in c {
                req.push_str(&format!("${}\r\n{a}\r\n", a.len()));
            }
            self.w.write_all(req.as_bytes()).unwrap();
        }
        self.w.flush().unwrap();
        (0..cmds.len())
            .map(|_| {
                let mut line = String::new();
                self.r.read_line(&mut line).unwrap();
                let line = line.trim_end().to_string();
                match line.strip_prefix('$') {
                    Some(n) => {
                        let n: i64 = n.parse().unwrap();
                        if n < 0 {
                            return None;
                        }
                        let mut buf = vec![0u8; n as usize + 2];
                        self.r.read_exact(&mut buf).unwrap();
                        Some(String::from_utf8_lossy(&buf[..n as usize]).into_owned())
                    }
                    None => Some(line),
                }
            })
            .collect()
    }

    fn set_all(&mut self, pairs: &[(String, String)]) {
        for chunk in pairs.chunks(500) {
            let cmds: Vec<Vec<String>> = chunk
                .iter()
                .map(|(k, v)| vec!["SET".into(), k.clone(), v.clone()])
                .collect();
            for r in self.pipeline(&cmds) {
                assert_eq!(r.as_deref(), Some("+OK"));
            }
        }
    }

    fn get_all(&mut self, keys: &[String]) -> Vec<Option<String>> {
        keys.chunks(500)
            .flat_map(|chunk| {
                let cmds: Vec<Vec<String>> = chunk
                    .iter()
                    .map(|k| vec!["GET".into(), k.clone()])
                    .collect();
                self.pipeline(&cmds)
            })
            .collect()
    }
}

/// Every key a shard holds, read from the shard itself.
fn shard_keys(addr: &str, password: &str) -> Vec<String> {
    let mut c = redis::Client::open(format!("redis://:{password}@{addr}/"))
        .unwrap()
        .get_connection_with_timeout(Duration::from_secs(10))
        .unwrap();
    let mut cursor = "0".to_string();
    let mut keys = Vec::new();
    loop {
        let (next, batch): (String, Vec<String>) = redis::cmd("SCAN")
            .arg(&cursor)
            .arg("COUNT")
            .arg(5000)
            .query(&mut c)
            .unwrap();
        keys.extend(batch);
        if next == "0" {
            return keys;
        }
        cursor = next;
    }
}

fn proxy_config(dir: &Path) -> ProxyConfig {
    ProxyConfig::parse(&std::fs::read_to_string(dir.join("nutcracker.yml")).unwrap()).unwrap()
}

/// Checks that every key sits on the shard the ring names (so the ring is nutcracker's), and returns the keys per
/// shard.
fn check_routing(cfg: &ProxyConfig) -> Vec<Vec<String>> {
    let ring = cfg.ring();
    cfg.servers
        .iter()
        .enumerate()
        .map(|(i, s)| {
            let keys = shard_keys(&s.addr(), cfg.redis_auth.as_deref().unwrap_or_default());
            for k in &keys {
                assert_eq!(
                    ring.owner(k.as_bytes()),
                    Some(i),
                    "{k} is on {} but the ring sends it elsewhere",
                    s.name
                );
            }
            keys
        })
        .collect()
}

/// A generated deployment's password (its `password` file).
fn password(dir: &Path) -> String {
    std::fs::read_to_string(dir.join("password"))
        .unwrap()
        .trim_end()
        .to_string()
}

fn memory_shares(dir: &Path) -> Vec<f64> {
    let d: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("deployment.json")).unwrap())
            .unwrap();
    let mem: Vec<f64> = d["shards"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["memory_bytes"].as_f64().unwrap())
        .collect();
    let total: f64 = mem.iter().sum();
    mem.iter().map(|m| m / total).collect()
}

/// Generates the search's mixed ycsb-b configuration (`cosine search --budget 2445 --workload ycsb-b
/// --deployment-out`: one c5.large of 4 GiB and four r5.xlarge of 32 GiB, so the small shard's share is 3%) into
/// `out`, its shards from `base`, its proxy on `proxy`.
fn generate_mixed(out: &Path, name: &str, base: u16, proxy: u16) {
    let dep = root().join("examples/deployment-ycsb-b-mixed.json");
    generate(&[
        "--deployment",
        dep.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
        "--name",
        name,
        "--base-port",
        &base.to_string(),
        "--proxy-port",
        &proxy.to_string(),
    ]);
}

/// `n` keys of each shape: sequential ids, `user:N`, YCSB's hashed `user` keys, random.
fn key_shapes(n: u64) -> Vec<(&'static str, Vec<String>)> {
    let mut rng = rand::rngs::StdRng::seed_from_u64(7);
    vec![
        ("sequential ids", (0..n).map(|i| i.to_string()).collect()),
        ("user:N", (0..n).map(|i| format!("user:{i}")).collect()),
        (
            "YCSB user keys",
            (0..n)
                .map(|i| String::from_utf8(cosine_ycsb::key(i, true)).unwrap())
                .collect(),
        ),
        (
            "random",
            (0..n)
                .map(|_| format!("{:016x}", rng.random::<u64>()))
                .collect(),
        ),
    ]
}

fn redis_cli() -> bool {
    Command::new("redis-cli").arg("--version").output().is_ok()
}

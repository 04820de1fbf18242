//! `cosine adversary`: an adversarial client suite against `cosine serve`. It starts a server of its own (a
//! child process on a loopback port, a fresh data directory), loads it, then, for a set time, plays every
//! client a server must survive at once: one byte every 100 ms, a 10^6-element multibulk header, a 512 MiB bulk
//! declared and never sent, a million pipelined GETs never read, `KEYS *` over every key (read, and never
//! read), more connections than the limit, and random bytes. Meanwhile a well-behaved client PINGs, and the
//! server's resident memory is sampled. It reports the PING latencies, the peak resident memory against the
//! bound it states, and whether the server kept its data and stayed up.

use anyhow::{bail, Context, Result};
use clap::Parser;
use cosine_server::resp::encode_request as request;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Arguments of `cosine adversary`.
#[derive(Parser, Debug)]
pub struct AdversaryArgs {
    /// Keys loaded before the attack (100-byte values): what `KEYS *` returns.
    #[arg(long, default_value_t = 1_000_000)]
    records: u64,
    /// Seconds the attack lasts.
    #[arg(long, default_value_t = 20.0)]
    seconds: f64,
    /// The server's connection limit (`serve --max-connections`); the flood opens 64 more.
    #[arg(long, default_value_t = 256)]
    max_connections: usize,
    /// Resident memory the server must stay within, in MiB (an error above it).
    #[arg(long, default_value_t = 1024)]
    rss_bound_mib: u64,
    /// A short run for a smoke test: 20,000 keys, 3 seconds.
    #[arg(long)]
    quick: bool,
    /// Print one JSON document.
    #[arg(long)]
    json: bool,
}

/// Bytes of each loaded value.
const VALUE_BYTES: usize = 100;

/// The server under attack: its process and address.
struct Server {
    child: Child,
    addr: SocketAddr,
    dir: std::path::PathBuf,
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

impl Server {
    /// Starts `cosine serve` on a loopback port the OS picks, with a 64 MiB LSM design.
    fn start(max_connections: usize) -> Result<Server> {
        let dir = std::env::temp_dir().join(format!("cosine-adversary-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).with_context(|| format!("creating {}", dir.display()))?;
        let design = cosine_design::Design::rocksdb_like(32 << 20, 8 << 20, 8 << 20);
        let design_path = dir.join("design.json");
        std::fs::write(&design_path, serde_json::to_string(&design)?)?;
        let mut child = Command::new(std::env::current_exe()?)
            .args(["serve", "--bind", "127.0.0.1:0", "--sync", "never"])
            .arg("--design")
            .arg(&design_path)
            .arg("--data")
            .arg(dir.join("data"))
            .args(["--max-connections", &max_connections.to_string()])
            .args(["--client-write-timeout", "5"])
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .context("starting cosine serve")?;
        let mut line = String::new();
        BufReader::new(child.stdout.take().expect("piped"))
            .read_line(&mut line)
            .context("reading the server's first line")?;
        let addr = line
            .split(" on ")
            .nth(1)
            .and_then(|s| s.split(',').next())
            .and_then(|s| s.trim().parse().ok());
        let Some(addr) = addr else {
            let _ = child.kill();
            bail!("the server did not say where it listens: {line:?}");
        };
        Ok(Server { child, addr, dir })
    }

    /// Resident bytes of the server process (VmRSS), if it still runs.
    fn resident(&self) -> Option<u64> {
        let status = std::fs::read_to_string(format!("/proc/{}/status", self.child.id())).ok()?;
        let kib: u64 = status
            .lines()
            .find(|l| l.starts_with("VmRSS:"))?
            .split_whitespace()
            .nth(1)?
            .parse()
            .ok()?;
        Some(kib * 1024)
    }

    /// Whether the process has exited.
    fn exited(&mut self) -> bool {
        !matches!(self.child.try_wait(), Ok(None))
    }
}

/// Reads one RESP reply, whole (nested arrays too), or fails.
fn read_reply(r: &mut impl BufRead) -> std::io::Result<Vec<u8>> {
    let mut line = Vec::new();
    r.read_until(b'\n', &mut line)?;
    if line.len() < 3 {
        return Err(std::io::Error::other("connection closed"));
    }
    let n: i64 = std::str::from_utf8(&line[1..line.len() - 2])
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(0);
    match line[0] {
        b'$' if n >= 0 => {
            let mut body = vec![0; n as usize + 2];
            r.read_exact(&mut body)?;
            body.truncate(n as usize);
            Ok(body)
        }
        b'*' => {
            for _ in 0..n.max(0) {
                read_reply(r)?;
            }
            Ok(line)
        }
        _ => Ok(line),
    }
}

fn key(i: u64) -> Vec<u8> {
    format!("key{i:010}").into_bytes()
}

fn value(i: u64) -> Vec<u8> {
    let mut v = format!("value{i:010}").into_bytes();
    v.resize(VALUE_BYTES, b'.');
    v
}

/// Loads `records` keys with pipelined SETs.
fn load(addr: SocketAddr, records: u64) -> Result<()> {
    let s = TcpStream::connect(addr)?;
    let mut w = s.try_clone()?;
    let mut r = BufReader::new(s);
    let mut i = 0;
    while i < records {
        let n = (records - i).min(1000);
        let mut batch = Vec::new();
        for j in i..i + n {
            batch.extend(request(&[b"SET", &key(j), &value(j)]));
        }
        w.write_all(&batch)?;
        for _ in 0..n {
            let reply = read_reply(&mut r)?;
            if reply != b"+OK\r\n" {
                bail!("SET answered {:?}", String::from_utf8_lossy(&reply));
            }
        }
        i += n;
    }
    Ok(())
}

/// What an attacker does on one connection, until it fails or the attack stops.
type Attack = dyn Fn(&mut TcpStream, &AtomicBool) -> std::io::Result<()> + Send;

/// One attacker: connects, plays `attack` until it fails or `stop`, and connects again; `connected` counts
/// its connections.
fn attacker(
    addr: SocketAddr,
    stop: Arc<AtomicBool>,
    connected: Arc<AtomicU64>,
    attack: impl Fn(&mut TcpStream, &AtomicBool) -> std::io::Result<()> + Send + 'static,
) -> std::thread::JoinHandle<()> {
    std::thread::spawn(move || {
        while !stop.load(Ordering::Relaxed) {
            match TcpStream::connect_timeout(&addr, Duration::from_secs(1)) {
                Ok(mut s) => {
                    connected.fetch_add(1, Ordering::Relaxed);
                    let _ = s.set_write_timeout(Some(Duration::from_millis(500)));
                    let _ = s.set_read_timeout(Some(Duration::from_millis(500)));
                    let _ = attack(&mut s, &stop);
                }
                Err(_) => std::thread::sleep(Duration::from_millis(50)),
            }
        }
    })
}

/// Holds a connection open, doing nothing, until `stop`.
fn hold(stop: &AtomicBool) -> std::io::Result<()> {
    while !stop.load(Ordering::Relaxed) {
        std::thread::sleep(Duration::from_millis(50));
    }
    Ok(())
}

/// Starts every attacker; returns their threads.
fn attack_all(
    addr: SocketAddr,
    records: u64,
    max_connections: usize,
    stop: &Arc<AtomicBool>,
    connected: &Arc<AtomicU64>,
    refused: &Arc<AtomicU64>,
) -> Vec<std::thread::JoinHandle<()>> {
    let mut threads = Vec::new();
    let mut spawn = |f: Box<Attack>| {
        threads.push(attacker(addr, stop.clone(), connected.clone(), f));
    };
    // one byte every 100 ms, of a request that never ends
    for _ in 0..4 {
        spawn(Box::new(|s, stop| {
            for b in b"*3\r\n$3\r\nSET\r\n$5\r\nslowl\r\n$100000\r\n"
                .iter()
                .cycle()
            {
                if stop.load(Ordering::Relaxed) {
                    break;
                }
                s.write_all(&[*b])?;
                std::thread::sleep(Duration::from_millis(100));
            }
            Ok(())
        }));
    }
    // a 10^6-element multibulk header, then silence
    spawn(Box::new(|s, stop| {
        s.write_all(b"*1000000\r\n")?;
        hold(stop)
    }));
    // a 512 MiB bulk declared and never sent
    spawn(Box::new(|s, stop| {
        s.write_all(b"*3\r\n$3\r\nSET\r\n$4\r\nhuge\r\n$536870912\r\n")?;
        s.write_all(&vec![b'x'; 1 << 16])?;
        hold(stop)
    }));
    // a million pipelined GETs, the replies never read
    spawn(Box::new(move |s, stop| {
        let mut batch = Vec::new();
        for i in 0..1000 {
            batch.extend(request(&[b"GET", &key(i % records.max(1))]));
        }
        for _ in 0..1000 {
            if stop.load(Ordering::Relaxed) {
                break;
            }
            s.write_all(&batch)?;
        }
        hold(stop)
    }));
    // KEYS * over every key: read whole, and never read
    spawn(Box::new(|s, _| {
        s.write_all(&request(&[b"KEYS", b"*"]))?;
        let _ = s.set_read_timeout(Some(Duration::from_secs(30)));
        read_reply(&mut BufReader::new(s.try_clone()?)).map(|_| ())
    }));
    spawn(Box::new(|s, stop| {
        s.write_all(&request(&[b"KEYS", b"*"]))?;
        hold(stop)
    }));
    // random bytes
    spawn(Box::new(|s, stop| {
        use rand::RngCore;
        let mut rng = rand::rng();
        let mut buf = vec![0u8; 4096];
        while !stop.load(Ordering::Relaxed) {
            rng.fill_bytes(&mut buf);
            s.write_all(&buf)?;
            std::thread::sleep(Duration::from_millis(10));
        }
        Ok(())
    }));
    // more connections than the limit, held; those the server turns away are counted
    let (stop2, connected2, refused2) = (stop.clone(), connected.clone(), refused.clone());
    threads.push(std::thread::spawn(move || {
        let mut held = Vec::new();
        for _ in 0..max_connections + 64 {
            if let Ok(s) = TcpStream::connect_timeout(&addr, Duration::from_secs(1)) {
                connected2.fetch_add(1, Ordering::Relaxed);
                held.push(s);
            }
        }
        for s in &mut held {
            let _ = s.set_read_timeout(Some(Duration::from_millis(100)));
            let mut buf = [0u8; 64];
            if let Ok(n) = s.read(&mut buf) {
                if buf[..n].starts_with(b"-ERR max number of clients") {
                    refused2.fetch_add(1, Ordering::Relaxed);
                }
            }
        }
        hold(&stop2).ok();
    }));
    threads
}

/// What one run found.
#[derive(serde::Serialize)]
struct Outcome {
    records: u64,
    seconds: f64,
    max_connections: usize,
    pings: usize,
    ping_errors: u64,
    ping_p50_us: f64,
    ping_p99_us: f64,
    ping_max_us: f64,
    resident_before_bytes: u64,
    resident_peak_bytes: u64,
    rss_bound_bytes: u64,
    attacker_connections: u64,
    flood_refused: u64,
    server_up: bool,
    data_intact: bool,
}

/// Runs `cosine adversary`.
pub fn run(a: AdversaryArgs) -> Result<()> {
    let (records, seconds) = if a.quick {
        (20_000, 3.0)
    } else {
        (a.records, a.seconds)
    };
    if !(seconds > 0.0 && seconds.is_finite()) || a.max_connections == 0 {
        bail!("--seconds and --max-connections must be positive");
    }
    let mut server = Server::start(a.max_connections)?;
    let addr = server.addr;
    eprintln!("loading {records} keys into the server on {addr} ...");
    load(addr, records)?;
    let before = server.resident().unwrap_or(0);
    // the well-behaved client connects first: the flood fills the rest
    let good = TcpStream::connect(addr)?;
    good.set_read_timeout(Some(Duration::from_secs(10)))?;
    let mut good_w = good.try_clone()?;
    let mut good_r = BufReader::new(good);
    let stop = Arc::new(AtomicBool::new(false));
    let (connected, refused) = (Arc::new(AtomicU64::new(0)), Arc::new(AtomicU64::new(0)));
    eprintln!("attacking for {seconds} s ...");
    let threads = attack_all(
        addr,
        records,
        a.max_connections,
        &stop,
        &connected,
        &refused,
    );
    let start = Instant::now();
    let (mut pings, mut errors, mut peak) = (Vec::new(), 0u64, before);
    while start.elapsed().as_secs_f64() < seconds {
        let t = Instant::now();
        let ok = good_w
            .write_all(b"*1\r\n$4\r\nPING\r\n")
            .and_then(|_| read_reply(&mut good_r));
        match ok {
            Ok(r) if r == b"+PONG\r\n" => pings.push(t.elapsed().as_secs_f64() * 1e6),
            _ => errors += 1,
        }
        peak = peak.max(server.resident().unwrap_or(0));
        std::thread::sleep(Duration::from_millis(2));
    }
    stop.store(true, Ordering::Relaxed);
    for t in threads {
        let _ = t.join();
    }
    let server_up = !server.exited();
    // the data is as loaded: a sample of keys read back on a fresh connection
    let data_intact = server_up
        && (|| -> Result<bool> {
            let s = TcpStream::connect(addr)?;
            s.set_read_timeout(Some(Duration::from_secs(10)))?;
            let mut w = s.try_clone()?;
            let mut r = BufReader::new(s);
            for i in (0..records).step_by((records / 100).max(1) as usize) {
                w.write_all(&request(&[b"GET", &key(i)]))?;
                if read_reply(&mut r)? != value(i) {
                    return Ok(false);
                }
            }
            Ok(true)
        })()
        .unwrap_or(false);
    pings.sort_by(f64::total_cmp);
    let at = |q: f64| {
        pings
            .get(((pings.len() as f64 * q) as usize).min(pings.len().saturating_sub(1)))
            .copied()
            .unwrap_or(f64::NAN)
    };
    let o = Outcome {
        records,
        seconds,
        max_connections: a.max_connections,
        pings: pings.len(),
        ping_errors: errors,
        ping_p50_us: at(0.5),
        ping_p99_us: at(0.99),
        ping_max_us: pings.last().copied().unwrap_or(f64::NAN),
        resident_before_bytes: before,
        resident_peak_bytes: peak,
        rss_bound_bytes: a.rss_bound_mib << 20,
        attacker_connections: connected.load(Ordering::Relaxed),
        flood_refused: refused.load(Ordering::Relaxed),
        server_up,
        data_intact,
    };
    if a.json {
        println!("{}", serde_json::to_string_pretty(&o)?);
    } else {
        println!(
            "PING under attack: {} answered, {} failed; p50 {:.0} µs, p99 {:.0} µs, max {:.0} µs",
            o.pings, o.ping_errors, o.ping_p50_us, o.ping_p99_us, o.ping_max_us
        );
        println!(
            "server resident memory: {} MiB before, {} MiB at its peak (bound {} MiB); {} attacker connections, \
             {} of the flood turned away at the limit",
            o.resident_before_bytes >> 20,
            o.resident_peak_bytes >> 20,
            a.rss_bound_mib,
            o.attacker_connections,
            o.flood_refused
        );
        println!(
            "server {}, data {}",
            if server_up { "up" } else { "DOWN" },
            if data_intact { "intact" } else { "NOT INTACT" }
        );
    }
    if !server_up
        || !data_intact
        || o.ping_errors > 0
        || peak > o.rss_bound_bytes
        || o.flood_refused == 0
    {
        bail!("the server did not hold up under attack (see above)");
    }
    Ok(())
}

//! `cosine serve` as a client sees it: the real binary on a loopback port, driven with the `redis` crate and raw
//! sockets.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

struct Server {
    child: Child,
    addr: String,
}

impl Server {
    fn start(data: &std::path::Path, extra: &[&str]) -> Server {
        let design =
            PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../examples/design-lsm.json");
        let mut child = Command::new(env!("CARGO_BIN_EXE_cosine"))
            .args([
                "serve",
                "--design",
                design.to_str().unwrap(),
                "--data",
                data.to_str().unwrap(),
                "--bind",
                "127.0.0.1:0",
            ])
            .args(extra)
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .unwrap();
        let mut line = String::new();
        BufReader::new(child.stdout.as_mut().unwrap())
            .read_line(&mut line)
            .unwrap();
        let addr = line
            .split(" on ")
            .nth(1)
            .unwrap()
            .split(',')
            .next()
            .unwrap()
            .trim()
            .to_string();
        Server { child, addr }
    }

    fn client(&self) -> redis::Connection {
        redis::Client::open(format!("redis://{}/", self.addr))
            .unwrap()
            .get_connection()
            .unwrap()
    }

    fn raw(&self) -> TcpStream {
        let s = TcpStream::connect(&self.addr).unwrap();
        s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
        s
    }

    fn shutdown(mut self) {
        let _ = redis::cmd("SHUTDOWN").exec(&mut self.client());
        let status = self.child.wait().unwrap();
        assert!(status.success(), "server exit: {status:?}");
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn data_dir(name: &str) -> tempfile::TempDir {
    tempfile::Builder::new().prefix(name).tempdir().unwrap()
}

#[test]
fn commands_behave_like_redis() {
    let dir = data_dir("serve-commands");
    let server = Server::start(dir.path(), &[]);
    let mut c = server.client();
    let pong: String = redis::cmd("PING").query(&mut c).unwrap();
    assert_eq!(pong, "PONG");
    let echo: String = redis::cmd("ECHO").arg("hi").query(&mut c).unwrap();
    assert_eq!(echo, "hi");
    let _: () = redis::cmd("SET").arg("k1").arg("v1").query(&mut c).unwrap();
    let v: Option<String> = redis::cmd("GET").arg("k1").query(&mut c).unwrap();
    assert_eq!(v.as_deref(), Some("v1"));
    let none: Option<String> = redis::cmd("GET").arg("missing").query(&mut c).unwrap();
    assert_eq!(none, None);
    let _: () = redis::cmd("MSET")
        .arg("a")
        .arg("1")
        .arg("b")
        .arg("2")
        .query(&mut c)
        .unwrap();
    let m: Vec<Option<String>> = redis::cmd("MGET")
        .arg("a")
        .arg("zz")
        .arg("b")
        .query(&mut c)
        .unwrap();
    assert_eq!(m, vec![Some("1".into()), None, Some("2".into())]);
    let n: i64 = redis::cmd("INCR").arg("a").query(&mut c).unwrap();
    assert_eq!(n, 2);
    let n: i64 = redis::cmd("INCRBY")
        .arg("counter")
        .arg(40)
        .query(&mut c)
        .unwrap();
    assert_eq!(n, 40);
    let e: redis::RedisResult<i64> = redis::cmd("INCR").arg("k1").query(&mut c);
    assert!(e.unwrap_err().to_string().contains("not an integer"));
    let nx: Option<String> = redis::cmd("SET")
        .arg("k1")
        .arg("other")
        .arg("NX")
        .query(&mut c)
        .unwrap();
    assert_eq!(nx, None);
    let n: i64 = redis::cmd("EXISTS")
        .arg("k1")
        .arg("nope")
        .arg("a")
        .query(&mut c)
        .unwrap();
    assert_eq!(n, 2);
    // hashes
    let added: i64 = redis::cmd("HSET")
        .arg("h")
        .arg("f1")
        .arg("x")
        .arg("f2")
        .arg("y")
        .query(&mut c)
        .unwrap();
    assert_eq!(added, 2);
    let _: () = redis::cmd("HMSET")
        .arg("h")
        .arg("f3")
        .arg("z")
        .query(&mut c)
        .unwrap();
    let all: Vec<String> = redis::cmd("HGETALL").arg("h").query(&mut c).unwrap();
    assert_eq!(all, vec!["f1", "x", "f2", "y", "f3", "z"]);
    let some: Vec<Option<String>> = redis::cmd("HMGET")
        .arg("h")
        .arg("f2")
        .arg("nope")
        .query(&mut c)
        .unwrap();
    assert_eq!(some, vec![Some("y".into()), None]);
    let one: Option<String> = redis::cmd("HGET").arg("h").arg("f3").query(&mut c).unwrap();
    assert_eq!(one.as_deref(), Some("z"));
    let d: i64 = redis::cmd("HDEL")
        .arg("h")
        .arg("f1")
        .arg("nope")
        .query(&mut c)
        .unwrap();
    assert_eq!(d, 1);
    let wrong: redis::RedisResult<String> = redis::cmd("GET").arg("h").query(&mut c);
    assert!(wrong.unwrap_err().to_string().contains("WRONGTYPE"));
    // sorted sets, as YCSB's Redis binding uses them
    let _: i64 = redis::cmd("ZADD")
        .arg("_indices")
        .arg(3)
        .arg("user3")
        .arg(1)
        .arg("user1")
        .arg(2)
        .arg("user2")
        .query(&mut c)
        .unwrap();
    let r: Vec<String> = redis::cmd("ZRANGEBYSCORE")
        .arg("_indices")
        .arg(2)
        .arg("+inf")
        .arg("LIMIT")
        .arg(0)
        .arg(10)
        .query(&mut c)
        .unwrap();
    assert_eq!(r, vec!["user2", "user3"]);
    let removed: i64 = redis::cmd("ZREM")
        .arg("_indices")
        .arg("user2")
        .query(&mut c)
        .unwrap();
    assert_eq!(removed, 1);
    let card: i64 = redis::cmd("ZCARD").arg("_indices").query(&mut c).unwrap();
    assert_eq!(card, 2);
    // ordered scans and keyspace commands
    for i in 0..30 {
        let _: () = redis::cmd("SET")
            .arg(format!("user{i:03}"))
            .arg(i)
            .query(&mut c)
            .unwrap();
    }
    let range: Vec<String> = redis::cmd("RANGE")
        .arg("user010")
        .arg("user013")
        .query(&mut c)
        .unwrap();
    assert_eq!(
        range,
        vec!["user010", "10", "user011", "11", "user012", "12"]
    );
    let mut cursor = "0".to_string();
    let mut seen = Vec::new();
    loop {
        let (next, keys): (String, Vec<String>) = redis::cmd("SCAN")
            .arg(&cursor)
            .arg("MATCH")
            .arg("user0*")
            .arg("COUNT")
            .arg(7)
            .query(&mut c)
            .unwrap();
        seen.extend(keys);
        if next == "0" {
            break;
        }
        cursor = next;
    }
    assert_eq!(seen.len(), 30);
    let size: i64 = redis::cmd("DBSIZE").query(&mut c).unwrap();
    assert_eq!(size, 30 + 6);
    let info: String = redis::cmd("INFO").query(&mut c).unwrap();
    assert!(
        info.contains("size_ratio:10")
            && info.contains("write_amplification")
            && info.contains("filter_bytes")
    );
    let cmds: redis::Value = redis::cmd("COMMAND").query(&mut c).unwrap();
    assert!(matches!(cmds, redis::Value::Array(ref v) if !v.is_empty()));
    let unknown: redis::RedisResult<String> = redis::cmd("FROB").arg("x").query(&mut c);
    assert!(unknown.unwrap_err().to_string().contains("unknown command"));
    let hello: redis::RedisResult<redis::Value> = redis::cmd("HELLO").arg(4).query(&mut c);
    assert!(hello.unwrap_err().to_string().contains("NOPROTO"));
    let pong: String = redis::cmd("PING").query(&mut c).unwrap();
    assert_eq!(pong, "PONG", "the connection survives errors");
    let _: () = redis::cmd("FLUSHALL").query(&mut c).unwrap();
    let size: i64 = redis::cmd("DBSIZE").query(&mut c).unwrap();
    assert_eq!(size, 0);
    server.shutdown();
}

/// RESP3, as clients that default to it (redis-py 5 and later) speak: `HELLO 3`, then maps, doubles and nulls;
/// transactions (redis-py's default pipeline is MULTI ... EXEC); a RESP2 connection to the same server keeps flat
/// arrays.
#[test]
fn resp3_clients_get_maps_doubles_and_nulls() {
    use redis::Value;
    let dir = data_dir("serve-resp3");
    let server = Server::start(dir.path(), &[]);
    let mut c = redis::Client::open(format!("redis://{}/?protocol=resp3", server.addr))
        .unwrap()
        .get_connection()
        .unwrap();
    let hello: Value = redis::cmd("HELLO").arg(3).query(&mut c).unwrap();
    let Value::Map(fields) = hello else {
        panic!("HELLO 3 answers a map: {hello:?}")
    };
    assert!(fields
        .iter()
        .any(|(k, v)| *k == Value::BulkString(b"proto".to_vec()) && *v == Value::Int(3)));
    let _: () = redis::cmd("SET").arg("k").arg("v").query(&mut c).unwrap();
    let v: Value = redis::cmd("GET").arg("k").query(&mut c).unwrap();
    assert_eq!(v, Value::BulkString(b"v".to_vec()));
    let missing: Value = redis::cmd("GET").arg("nope").query(&mut c).unwrap();
    assert_eq!(missing, Value::Nil);
    let _: () = redis::cmd("HSET")
        .arg("h")
        .arg("f1")
        .arg("a")
        .arg("f2")
        .arg("b")
        .query(&mut c)
        .unwrap();
    let all: Value = redis::cmd("HGETALL").arg("h").query(&mut c).unwrap();
    assert!(matches!(all, Value::Map(ref m) if m.len() == 2), "{all:?}");
    let typed: std::collections::HashMap<String, String> =
        redis::cmd("HGETALL").arg("h").query(&mut c).unwrap();
    assert_eq!(typed["f2"], "b");
    let _: () = redis::cmd("ZADD")
        .arg("z")
        .arg(1.5)
        .arg("m1")
        .arg(2)
        .arg("m2")
        .query(&mut c)
        .unwrap();
    let scored: Value = redis::cmd("ZRANGEBYSCORE")
        .arg("z")
        .arg("-inf")
        .arg("+inf")
        .arg("WITHSCORES")
        .query(&mut c)
        .unwrap();
    assert_eq!(
        scored,
        Value::Array(vec![
            Value::Array(vec![Value::BulkString(b"m1".to_vec()), Value::Double(1.5)]),
            Value::Array(vec![Value::BulkString(b"m2".to_vec()), Value::Double(2.0)]),
        ])
    );
    let config: Value = redis::cmd("CONFIG")
        .arg("GET")
        .arg("databases")
        .query(&mut c)
        .unwrap();
    assert!(
        matches!(config, Value::Map(ref m) if m.len() == 1),
        "{config:?}"
    );
    let (a, b, n): (String, Option<String>, i64) = redis::pipe()
        .cmd("GET")
        .arg("k")
        .cmd("GET")
        .arg("nope")
        .cmd("INCR")
        .arg("counter")
        .query(&mut c)
        .unwrap();
    assert_eq!((a.as_str(), b, n), ("v", None, 1));
    let err: redis::RedisResult<i64> = redis::cmd("INCR").arg("h").query(&mut c);
    assert!(err.is_err());
    let pong: String = redis::cmd("PING").query(&mut c).unwrap();
    assert_eq!(pong, "PONG");
    // transactions: MULTI ... EXEC answers the queued commands' replies; a refused command aborts it
    let (n, v): (i64, String) = redis::pipe()
        .atomic()
        .cmd("INCR")
        .arg("counter")
        .cmd("GET")
        .arg("k")
        .query(&mut c)
        .unwrap();
    assert_eq!((n, v.as_str()), (2, "v"));
    let _: () = redis::cmd("MULTI").query(&mut c).unwrap();
    let queued: String = redis::cmd("SET").arg("t").arg("1").query(&mut c).unwrap();
    assert_eq!(queued, "QUEUED");
    assert!(redis::cmd("NOSUCH").query::<Value>(&mut c).is_err());
    let aborted: redis::RedisResult<Value> = redis::cmd("EXEC").query(&mut c);
    let aborted = aborted.unwrap_err();
    assert!(
        aborted.kind() == redis::ErrorKind::ExecAbortError
            || aborted.to_string().contains("EXECABORT"),
        "{aborted}"
    );
    let t: Option<String> = redis::cmd("GET").arg("t").query(&mut c).unwrap();
    assert_eq!(t, None, "an aborted transaction writes nothing");
    let _: () = redis::cmd("MULTI").query(&mut c).unwrap();
    let _: String = redis::cmd("SET").arg("t").arg("1").query(&mut c).unwrap();
    let _: () = redis::cmd("DISCARD").query(&mut c).unwrap();
    let t: Option<String> = redis::cmd("GET").arg("t").query(&mut c).unwrap();
    assert_eq!(t, None, "a discarded transaction writes nothing");
    assert!(redis::cmd("EXEC").query::<Value>(&mut c).is_err());
    // a RESP2 client meanwhile
    let mut old = server.client();
    let flat: Value = redis::cmd("HGETALL").arg("h").query(&mut old).unwrap();
    assert!(
        matches!(flat, Value::Array(ref v) if v.len() == 4),
        "{flat:?}"
    );
    let flat: Value = redis::cmd("ZRANGEBYSCORE")
        .arg("z")
        .arg("-inf")
        .arg("+inf")
        .arg("WITHSCORES")
        .query(&mut old)
        .unwrap();
    assert!(
        matches!(flat, Value::Array(ref v) if v.len() == 4 && v[1] == Value::BulkString(b"1.5".to_vec())),
        "{flat:?}"
    );
    let nil: Value = redis::cmd("GET").arg("nope").query(&mut old).unwrap();
    assert_eq!(nil, Value::Nil);
    server.shutdown();
}

/// What RESP3 and transactions put on the wire, read raw: nulls are `_`, HELLO's map is `%`, a transaction may
/// arrive across several writes and mix with plain SETs, QUIT inside one closes the connection, SHUTDOWN inside
/// one aborts it; and nothing another client does lands between a transaction's commands.
#[test]
fn resp3_and_transactions_on_the_wire() {
    use std::io::{Read, Write};
    let dir = data_dir("serve-resp3-raw");
    let server = Server::start(dir.path(), &[]);
    let mut s = server.raw();
    let read_until = |s: &mut TcpStream, want: &str| -> String {
        let mut got = Vec::new();
        let mut buf = [0u8; 4096];
        while !String::from_utf8_lossy(&got).contains(want) {
            let n = s.read(&mut buf).unwrap();
            assert!(
                n > 0,
                "closed before {want:?}: {:?}",
                String::from_utf8_lossy(&got)
            );
            got.extend_from_slice(&buf[..n]);
        }
        String::from_utf8_lossy(&got).into_owned()
    };
    s.write_all(b"*2\r\n$5\r\nHELLO\r\n$1\r\n3\r\n").unwrap();
    let hello = read_until(&mut s, "modules");
    assert!(hello.starts_with("%7\r\n"), "{hello:?}");
    s.write_all(b"*2\r\n$3\r\nGET\r\n$7\r\nmissing\r\n")
        .unwrap();
    assert_eq!(read_until(&mut s, "\r\n"), "_\r\n");
    // a transaction across three writes, after plain SETs in the same write as MULTI
    s.write_all(b"*3\r\n$3\r\nSET\r\n$1\r\na\r\n$1\r\n1\r\n*1\r\n$5\r\nMULTI\r\n")
        .unwrap();
    assert_eq!(read_until(&mut s, "+OK\r\n+OK\r\n"), "+OK\r\n+OK\r\n");
    s.write_all(b"*2\r\n$4\r\nINCR\r\n$1\r\na\r\n").unwrap();
    assert_eq!(read_until(&mut s, "\r\n"), "+QUEUED\r\n");
    s.write_all(b"*2\r\n$3\r\nGET\r\n$1\r\nb\r\n*1\r\n$4\r\nEXEC\r\n")
        .unwrap();
    assert_eq!(read_until(&mut s, "_\r\n"), "+QUEUED\r\n*2\r\n:2\r\n_\r\n");
    // SHUTDOWN inside a transaction aborts it (and the server keeps running)
    s.write_all(b"*1\r\n$5\r\nMULTI\r\n*1\r\n$8\r\nSHUTDOWN\r\n*1\r\n$4\r\nEXEC\r\n")
        .unwrap();
    let out = read_until(&mut s, "EXECABORT");
    assert!(out.contains("not allowed inside a transaction"), "{out:?}");
    // QUIT inside one closes the connection at once
    s.write_all(b"*1\r\n$5\r\nMULTI\r\n*1\r\n$4\r\nQUIT\r\n")
        .unwrap();
    assert_eq!(read_until(&mut s, "+OK\r\n+OK\r\n"), "+OK\r\n+OK\r\n");
    let mut rest = Vec::new();
    assert_eq!(
        s.read_to_end(&mut rest).unwrap_or(0),
        0,
        "closed after QUIT"
    );

    // isolation: another client increments a counter as fast as it can; a transaction reading it twice sees
    // one value
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let writer = {
        let (stop, mut c) = (stop.clone(), server.client());
        std::thread::spawn(move || {
            let mut n = 0u64;
            while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                let _: i64 = redis::cmd("INCR").arg("hot").query(&mut c).unwrap();
                n += 1;
            }
            n
        })
    };
    let mut c = server.client();
    // a scan between the two reads gives the writer time to land in between, as it does outside a transaction
    let mut fill = redis::pipe();
    for i in 0..2000 {
        fill.cmd("SET").arg(format!("fill:{i}")).arg(i).ignore();
    }
    let _: () = fill.query(&mut c).unwrap();
    // the counter read twice around a scan, in a transaction or a plain pipeline
    let mut reads = |atomic: bool| -> (Option<i64>, Option<i64>) {
        let mut p = redis::pipe();
        if atomic {
            p.atomic();
        }
        p.cmd("GET")
            .arg("hot")
            .cmd("KEYS")
            .arg("fill:*")
            .cmd("GET")
            .arg("hot");
        let (a, _, b): (Option<i64>, Vec<String>, Option<i64>) = p.query(&mut c).unwrap();
        (a, b)
    };
    let mut moved = 0;
    for _ in 0..100 {
        let (a, b) = reads(true);
        assert_eq!(a, b, "a write landed inside a transaction");
        let (x, y) = reads(false);
        moved += usize::from(x != y);
    }
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    assert!(writer.join().unwrap() > 0);
    eprintln!(
        "outside transactions, {moved} of 100 pipelines saw the counter move between their reads"
    );
    server.shutdown();
}

#[test]
fn pipelining_and_persistence_across_restarts() {
    let dir = data_dir("serve-persist");
    let server = Server::start(dir.path(), &["--sync", "always"]);
    let mut c = server.client();
    let mut pipe = redis::pipe();
    for i in 0..2000 {
        pipe.cmd("SET")
            .arg(format!("key{i:05}"))
            .arg(format!("value{i}"))
            .ignore();
    }
    let _: () = pipe.query(&mut c).unwrap();
    server.shutdown();
    // SHUTDOWN flushed and closed: everything is there after a restart; then SIGTERM does the same
    let server = Server::start(dir.path(), &[]);
    let mut c = server.client();
    let v: Option<String> = redis::cmd("GET").arg("key01999").query(&mut c).unwrap();
    assert_eq!(v.as_deref(), Some("value1999"));
    let _: () = redis::cmd("SET")
        .arg("after-restart")
        .arg("yes")
        .query(&mut c)
        .unwrap();
    let status = Command::new("kill")
        .arg("-TERM")
        .arg(server.child.id().to_string())
        .status()
        .unwrap();
    assert!(status.success());
    let mut server = server;
    assert!(server.child.wait().unwrap().success());
    let server2 = Server::start(dir.path(), &[]);
    let mut c = server2.client();
    let v: Option<String> = redis::cmd("GET")
        .arg("after-restart")
        .query(&mut c)
        .unwrap();
    assert_eq!(v.as_deref(), Some("yes"));
    let n: i64 = redis::cmd("DBSIZE").query(&mut c).unwrap();
    assert_eq!(n, 2001);
    server2.shutdown();
}

#[test]
fn bad_clients_only_hurt_themselves() {
    let dir = data_dir("serve-bad");
    let server = Server::start(
        dir.path(),
        &["--max-connections", "3", "--max-request-bytes", "1000"],
    );
    let mut good = server.client();
    // a malformed stream gets an error and its connection is closed
    let mut bad = server.raw();
    bad.write_all(b"*1\r\n+PING\r\n").unwrap();
    let mut reply = Vec::new();
    let _ = bad.read_to_end(&mut reply);
    let reply = String::from_utf8_lossy(&reply);
    assert!(reply.starts_with("-ERR Protocol error"), "{reply}");
    // a client that disconnects mid-request
    let mut half = server.raw();
    half.write_all(b"*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$10\r\nabc")
        .unwrap();
    drop(half);
    // (closed connections give their slot back once the server has seen them go)
    std::thread::sleep(Duration::from_millis(600));
    // a request over the size limit
    let mut big = server.raw();
    let value = "x".repeat(2000);
    big.write_all(
        format!(
            "*3\r\n$3\r\nSET\r\n$1\r\nk\r\n${}\r\n{value}\r\n",
            value.len()
        )
        .as_bytes(),
    )
    .unwrap();
    let mut reply = Vec::new();
    let _ = big.read_to_end(&mut reply);
    let reply = String::from_utf8_lossy(&reply);
    assert!(reply.contains("larger than 1000 bytes"), "{reply}");
    // the well-behaved client is unaffected
    let pong: String = redis::cmd("PING").query(&mut good).unwrap();
    assert_eq!(pong, "PONG");
    // the connection limit: at most three at once; the others are told why and closed
    std::thread::sleep(Duration::from_millis(600));
    let mut extra = Vec::new();
    let (mut served, mut refused) = (0, 0);
    for _ in 0..5 {
        let mut s = server.raw();
        s.set_read_timeout(Some(Duration::from_secs(3))).unwrap();
        s.write_all(b"PING\r\n").unwrap();
        let mut buf = [0u8; 128];
        let n = s.read(&mut buf).unwrap_or(0);
        let reply = String::from_utf8_lossy(&buf[..n]).to_string();
        if reply.starts_with("+PONG") {
            served += 1;
        } else {
            assert!(reply.contains("max number of clients"), "{reply}");
            refused += 1;
        }
        extra.push(s);
    }
    assert!(
        served <= 2 && refused >= 3,
        "served {served}, refused {refused}"
    );
    drop((extra, good));
    std::thread::sleep(Duration::from_millis(300));
    server.shutdown();
}

/// Acknowledged SETs survive a SIGKILL of the server in every sync mode (under `never` too: each reply
/// follows the log's write to the OS), whether they came one by one, pipelined, or from many connections at
/// once through the group commit.
#[test]
fn acknowledged_sets_survive_a_kill_in_every_sync_mode() {
    for sync in ["never", "batch", "always"] {
        let dir = data_dir("cosine-kill");
        let mut server = Server::start(dir.path(), &["--sync", sync]);
        let mut c = server.client();
        for i in 0..100 {
            let _: () = redis::cmd("SET")
                .arg(format!("one{i}"))
                .arg(i)
                .query(&mut c)
                .unwrap();
        }
        let mut pipe = redis::pipe();
        for i in 0..100 {
            pipe.cmd("SET").arg(format!("pipe{i}")).arg(i).ignore();
        }
        let _: () = pipe.query(&mut c).unwrap();
        let writers: Vec<_> = (0..8)
            .map(|t| {
                let mut c = server.client();
                std::thread::spawn(move || {
                    for i in 0..50 {
                        let _: () = redis::cmd("SET")
                            .arg(format!("conn{t}-{i}"))
                            .arg(i)
                            .query(&mut c)
                            .unwrap();
                    }
                })
            })
            .collect();
        for w in writers {
            w.join().unwrap();
        }
        // every SET above was acknowledged: SIGKILL, no shutdown
        server.child.kill().unwrap();
        server.child.wait().unwrap();
        drop(server);
        let server = Server::start(dir.path(), &["--sync", sync]);
        let mut c = server.client();
        let n: u64 = redis::cmd("DBSIZE").query(&mut c).unwrap();
        assert_eq!(n, 600, "{sync}: acknowledged SETs lost across a kill");
        let v: String = redis::cmd("GET").arg("conn7-49").query(&mut c).unwrap();
        assert_eq!(v, "49");
        server.shutdown();
    }
}

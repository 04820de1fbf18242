//! Pipelining and persistence across restarts, bad clients that hurt only themselves, and acknowledged
//! writes that survive a kill in every sync mode.

use super::*;

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
    server.terminate();
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

/// A client that pipelines requests and never reads the replies loses its connection once a reply has waited
/// for it longer than `--client-write-timeout`, and an idle one after `--timeout`; a well-behaved client is
/// answered meanwhile.
#[test]
fn clients_that_stop_reading_or_go_idle_are_let_go() {
    let dir = data_dir("serve-stuck");
    let server = Server::start(
        dir.path(),
        &["--client-write-timeout", "1", "--timeout", "2"],
    );
    let mut good = server.client();
    let value = "v".repeat(100_000);
    let _: () = redis::cmd("SET")
        .arg("big")
        .arg(&value)
        .query(&mut good)
        .unwrap();
    // 2,000 GETs of 100 KB: 200 MB of replies, far beyond what the sockets' buffers hold
    let mut stuck = server.raw();
    let gets = "*2\r\n$3\r\nGET\r\n$3\r\nbig\r\n".repeat(2000);
    stuck.write_all(gets.as_bytes()).unwrap();
    let started = std::time::Instant::now();
    let pong: String = redis::cmd("PING").query(&mut good).unwrap();
    assert_eq!(pong, "PONG");
    // the stuck client's connection is closed: reading it now ends (after what was sent) well before the
    // 200 MB were all written
    std::thread::sleep(Duration::from_millis(2500));
    stuck
        .set_read_timeout(Some(Duration::from_secs(20)))
        .unwrap();
    let mut got = 0usize;
    let mut buf = vec![0u8; 1 << 20];
    loop {
        match stuck.read(&mut buf) {
            Ok(0) | Err(_) => break,
            Ok(n) => got += n,
        }
    }
    assert!(
        got < 100 << 20,
        "{got} bytes of replies reached a client that stopped reading"
    );
    assert!(started.elapsed() < Duration::from_secs(20));
    // an idle connection is closed after --timeout
    let mut idle = server.raw();
    idle.set_read_timeout(Some(Duration::from_secs(10)))
        .unwrap();
    let before = std::time::Instant::now();
    let mut one = [0u8; 1];
    let n = idle.read(&mut one).unwrap_or(0);
    assert_eq!(n, 0, "the idle connection got bytes");
    let waited = before.elapsed();
    assert!(
        waited >= Duration::from_millis(1500) && waited < Duration::from_secs(9),
        "{waited:?}"
    );
    server.shutdown();
}

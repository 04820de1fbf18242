//! Who gets in: a password (AUTH, HELLO's AUTH, `NOAUTH` before), commands switched off, CONFIG SET that
//! never answers a silent OK, and protected mode turning away clients beyond loopback without a password.

use super::*;

/// Sends raw bytes and reads what arrives until `lines` reply lines have come (or the read times out).
fn exchange(s: &mut TcpStream, request: &[u8], lines: usize) -> String {
    s.write_all(request).unwrap();
    let mut got = Vec::new();
    let mut buf = [0u8; 4096];
    while got.iter().filter(|&&b| b == b'\n').count() < lines {
        match s.read(&mut buf) {
            Ok(0) | Err(_) => break,
            Ok(n) => got.extend_from_slice(&buf[..n]),
        }
    }
    String::from_utf8_lossy(&got).into_owned()
}

#[test]
fn a_password_keeps_out_every_command_until_auth() {
    let dir = data_dir("serve-auth");
    let secret = dir.path().join("password");
    std::fs::write(&secret, "s3cret-pass\n").unwrap();
    let data = dir.path().join("db");
    let server = Server::start(&data, &["--requirepass-file", secret.to_str().unwrap()]);
    let mut s = server.raw();
    // before AUTH: writes, point reads (the fast paths), FLUSHALL, SHUTDOWN and a transaction all refused;
    // HELLO without credentials too
    for cmd in [
        "SET k v", "GET k", "MGET k", "PING", "FLUSHALL", "SHUTDOWN", "MULTI", "KEYS *", "HELLO 3",
    ] {
        let reply = exchange(&mut s, format!("{cmd}\r\n").as_bytes(), 1);
        assert!(reply.starts_with("-NOAUTH"), "{cmd}: {reply}");
    }
    // a pipelined batch: the SET before AUTH is refused, the one after it runs
    let reply = exchange(
        &mut s,
        b"SET early 1\r\nAUTH wrong\r\nAUTH s3cret-pass\r\nSET late 2\r\nGET late\r\n",
        6,
    );
    let lines: Vec<&str> = reply.split("\r\n").collect();
    assert!(lines[0].starts_with("-NOAUTH"), "{reply}");
    assert!(lines[1].starts_with("-WRONGPASS"), "{reply}");
    assert_eq!(&lines[2..6], ["+OK", "+OK", "$1", "2"], "{reply}");
    // what follows an AUTH in the same write is read under it: a bulk over the 16 KiB allowed before it
    let mut big = server.raw();
    let value = "v".repeat(20_000);
    let request = format!(
        "AUTH s3cret-pass\r\n*3\r\n$3\r\nSET\r\n$3\r\nbig\r\n${}\r\n{value}\r\n",
        value.len()
    );
    assert_eq!(exchange(&mut big, request.as_bytes(), 2), "+OK\r\n+OK\r\n");
    // before it, the same bulk ends the connection
    let mut early = server.raw();
    let request = format!(
        "*3\r\n$3\r\nSET\r\n$3\r\nbig\r\n${}\r\n{value}\r\n",
        value.len()
    );
    let reply = exchange(&mut early, request.as_bytes(), 1);
    assert!(reply.contains("unauthenticated bulk length"), "{reply}");
    // HELLO's AUTH: wrong credentials leave the protocol alone, right ones switch it
    let mut h = server.raw();
    let reply = exchange(&mut h, b"HELLO 3 AUTH default nope\r\n", 1);
    assert!(reply.starts_with("-WRONGPASS"), "{reply}");
    let reply = exchange(&mut h, b"HELLO 3 AUTH admin s3cret-pass\r\n", 1);
    assert!(reply.starts_with("-WRONGPASS"), "{reply}");
    let reply = exchange(&mut h, b"HELLO 3 AUTH default s3cret-pass\r\n", 1);
    assert!(reply.starts_with("%7"), "{reply}");
    // a client library with the password in its URL
    let mut c = redis::Client::open(format!("redis://:s3cret-pass@{}/", server.addr))
        .unwrap()
        .get_connection()
        .unwrap();
    let v: Option<String> = redis::cmd("GET").arg("late").query(&mut c).unwrap();
    assert_eq!(v.as_deref(), Some("2"));
    let early: Option<String> = redis::cmd("GET").arg("early").query(&mut c).unwrap();
    assert_eq!(early, None, "the SET sent before AUTH must not have run");
    // CONFIG SET never answers OK for what it does not do (a password set at runtime would not be checked)
    let r: redis::RedisResult<()> = redis::cmd("CONFIG")
        .arg("SET")
        .arg("requirepass")
        .arg("other")
        .query(&mut c);
    assert!(
        r.unwrap_err().to_string().contains("not supported"),
        "CONFIG SET requirepass"
    );
    let _: () = redis::cmd("CONFIG")
        .arg("SET")
        .arg("appendonly")
        .arg("yes")
        .query(&mut c)
        .unwrap();
    // a wrong password does not pass through a client library either
    let wrong = redis::Client::open(format!("redis://:wrong@{}/", server.addr))
        .unwrap()
        .get_connection();
    assert!(wrong.is_err());
    drop((s, h, c));
    server.terminate();
}

#[test]
fn disabled_commands_are_refused_to_everyone() {
    let dir = data_dir("serve-disabled");
    let server = Server::start(
        dir.path(),
        &[
            "--disable-command",
            "flushall,FLUSHDB",
            "--disable-command",
            "CONFIG,DEBUG",
        ],
    );
    let mut c = server.client();
    let _: () = redis::cmd("SET")
        .arg("keep")
        .arg("me")
        .query(&mut c)
        .unwrap();
    for cmd in ["FLUSHALL", "FLUSHDB", "CONFIG"] {
        let r: redis::RedisResult<()> = redis::cmd(cmd).arg("GET").query(&mut c);
        let e = r.unwrap_err().to_string();
        assert!(e.contains("disabled"), "{cmd}: {e}");
    }
    // inside a transaction the refusal aborts it, and nothing of it runs
    let mut s = server.raw();
    let reply = exchange(
        &mut s,
        b"MULTI\r\nSET keep other\r\nFLUSHALL\r\nEXEC\r\n",
        4,
    );
    assert!(
        reply.contains("disabled") && reply.contains("EXECABORT"),
        "{reply}"
    );
    let v: Option<String> = redis::cmd("GET").arg("keep").query(&mut c).unwrap();
    assert_eq!(v.as_deref(), Some("me"));
    drop((s, c));
    server.shutdown();
    // commands of the fast paths (group-committed SETs, point reads on the event loop), pipelined, any case
    let server = Server::start(dir.path(), &["--disable-command", "get,SET"]);
    let mut s = server.raw();
    let reply = exchange(&mut s, b"set k v\r\nget keep\r\nmget keep\r\n", 4);
    let lines: Vec<&str> = reply.split("\r\n").collect();
    assert!(
        lines[0].contains("disabled") && lines[1].contains("disabled"),
        "{reply}"
    );
    assert_eq!(&lines[2..4], ["*1", "$2"], "{reply}");
    drop(s);
    server.shutdown();
}

#[test]
fn bad_access_settings_are_one_clear_error() {
    let dir = data_dir("serve-bad-access");
    let design = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../examples/design-lsm.json");
    let empty = dir.path().join("empty");
    std::fs::write(&empty, "\n").unwrap();
    let cases: [&[&str]; 4] = [
        &["--disable-command", "FLUSHEVERYTHING"],
        &["--requirepass-file", empty.to_str().unwrap()],
        &["--requirepass-file", "/nonexistent/password"],
        &["--requirepass", ""],
    ];
    for extra in cases {
        let out = Command::new(env!("CARGO_BIN_EXE_cosine"))
            .args([
                "serve",
                "--design",
                design.to_str().unwrap(),
                "--bind",
                "127.0.0.1:0",
            ])
            .args(["--data", dir.path().join("db").to_str().unwrap()])
            .args(extra)
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{extra:?}: {err}");
        assert_eq!(err.trim().lines().count(), 1, "{extra:?}: {err}");
        assert!(!err.contains("panicked"), "{extra:?}: {err}");
    }
}

/// This host's address on a non-loopback interface, if it has one (the route a UDP socket would take; nothing
/// is sent).
fn outside_address() -> Option<std::net::IpAddr> {
    let s = std::net::UdpSocket::bind("0.0.0.0:0").ok()?;
    s.connect("10.255.255.255:9").ok()?;
    let ip = s.local_addr().ok()?.ip();
    (!ip.is_loopback() && !ip.is_unspecified()).then_some(ip)
}

#[test]
fn protected_mode_turns_away_clients_beyond_loopback_without_a_password() {
    let Some(ip) = outside_address() else {
        eprintln!("skipped: this host has no address beyond loopback");
        return;
    };
    let dir = data_dir("serve-protected");
    let server = Server::start(dir.path(), &["--bind", "0.0.0.0:0"]);
    let port = server.addr.rsplit(':').next().unwrap().to_string();
    let mut remote = TcpStream::connect(format!("{ip}:{port}")).unwrap();
    remote
        .set_read_timeout(Some(Duration::from_secs(10)))
        .unwrap();
    let reply = exchange(&mut remote, b"SET k v\r\n", 1);
    assert!(reply.starts_with("-DENIED"), "{reply}");
    // loopback clients are served
    let mut local = redis::Client::open(format!("redis://127.0.0.1:{port}/"))
        .unwrap()
        .get_connection()
        .unwrap();
    let pong: String = redis::cmd("PING").query(&mut local).unwrap();
    assert_eq!(pong, "PONG");
    drop((remote, local));
    server.terminate();
    // with protected mode off, the same client is served
    let server = Server::start(
        dir.path(),
        &["--bind", "0.0.0.0:0", "--protected-mode", "no"],
    );
    let port = server.addr.rsplit(':').next().unwrap().to_string();
    let mut remote = TcpStream::connect(format!("{ip}:{port}")).unwrap();
    remote
        .set_read_timeout(Some(Duration::from_secs(10)))
        .unwrap();
    assert_eq!(exchange(&mut remote, b"PING\r\n", 1), "+PONG\r\n");
    drop(remote);
    server.terminate();
}

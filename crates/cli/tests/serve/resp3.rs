//! RESP3: a client's maps, doubles and nulls, and RESP3 and transactions on the raw wire.

use super::*;

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
    let reads = |c: &mut redis::Connection, atomic: bool| -> (Option<i64>, Option<i64>) {
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
        let (a, _, b): (Option<i64>, Vec<String>, Option<i64>) = p.query(c).unwrap();
        (a, b)
    };
    let mut moved = 0;
    let mut moved_apart = 0;
    for _ in 0..100 {
        let (a, b) = reads(&mut c, true);
        assert_eq!(a, b, "a write landed inside a transaction");
        let (x, y) = reads(&mut c, false);
        moved += usize::from(x != y);
        // the positive control: the same reads as three round trips, which nothing isolates
        let x: Option<i64> = redis::cmd("GET").arg("hot").query(&mut c).unwrap();
        let _: Vec<String> = redis::cmd("KEYS").arg("fill:*").query(&mut c).unwrap();
        let y: Option<i64> = redis::cmd("GET").arg("hot").query(&mut c).unwrap();
        moved_apart += usize::from(x != y);
    }
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    assert!(writer.join().unwrap() > 0);
    assert!(
        moved_apart > 0,
        "the writer never landed between two reads: the transactions' check above proves nothing"
    );
    eprintln!(
        "outside transactions, {moved} of 100 pipelines and {moved_apart} of 100 round-trip sequences saw the counter move between their reads"
    );
    server.shutdown();
}

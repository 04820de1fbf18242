//! Redis commands through the `redis` crate: each behaves as Redis's does.

use super::*;

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

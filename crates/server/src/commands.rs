//! The commands: Redis semantics on the engine. Each runs to completion (the engine is synchronous); the
//! connection task calls them inside `block_in_place`.

use crate::resp::Reply;
use crate::store::{self, HASH, INTERNAL, STRING, ZSET};
use cosine_design::Design;
use cosine_engine::{Engine, Error as EngineError};
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

/// What the connection does after replying.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Control {
    /// Read the next request.
    Continue,
    /// Close this connection (QUIT).
    Close,
    /// Stop the server (SHUTDOWN).
    Shutdown,
}

/// The database behind the server.
pub struct Db {
    /// The engine.
    pub engine: Arc<Engine>,
    /// Its design (for INFO).
    pub design: Design,
    /// Commands served.
    pub commands: AtomicU64,
    /// Connections accepted.
    pub connections: AtomicU64,
    /// When the server started.
    pub started: std::time::Instant,
    /// Group commit of plain SETs across connections.
    pub committer: crate::commit::Committer,
}

/// A key and its stored value.
type KeyValue = (Vec<u8>, Vec<u8>);

const WRONGTYPE: &str = "WRONGTYPE Operation against a key holding the wrong kind of value";

fn engine_err(e: EngineError) -> Reply {
    Reply::err(format!("ERR engine: {e}"))
}

fn arity(name: &str) -> Reply {
    Reply::err(format!(
        "ERR wrong number of arguments for '{name}' command"
    ))
}

fn int_arg(b: &[u8]) -> Option<i64> {
    std::str::from_utf8(b).ok()?.parse().ok()
}

fn float_arg(b: &[u8]) -> Option<f64> {
    let s = std::str::from_utf8(b).ok()?.to_ascii_lowercase();
    match s.as_str() {
        "+inf" | "inf" => Some(f64::INFINITY),
        "-inf" => Some(f64::NEG_INFINITY),
        _ => s.parse().ok().filter(|x: &f64| !x.is_nan()),
    }
}

macro_rules! tryr {
    ($e:expr) => {
        match $e {
            Ok(v) => v,
            Err(e) => return engine_err(e),
        }
    };
}

impl Db {
    /// A database over `engine`.
    pub fn new(engine: Arc<Engine>, design: Design) -> Self {
        Db {
            committer: crate::commit::Committer::default(),
            engine,
            design,
            commands: AtomicU64::new(0),
            connections: AtomicU64::new(0),
            started: std::time::Instant::now(),
        }
    }

    /// Whether a command is a point read (GET, MGET, EXISTS, STRLEN, TYPE, HGET, HEXISTS, HLEN, PING): a few
    /// block reads at most, never a write or a scan.
    pub fn is_point_read(args: &[Vec<u8>]) -> bool {
        const READS: [&[u8]; 9] = [
            b"GET", b"MGET", b"EXISTS", b"STRLEN", b"TYPE", b"HGET", b"HEXISTS", b"HLEN", b"PING",
        ];
        args.first()
            .is_some_and(|n| READS.iter().any(|r| n.eq_ignore_ascii_case(r)))
    }

    /// The key and the stored value of a plain `SET key value` (no options) that the engine will take, or
    /// None for any other command: those go through [`Db::execute`].
    pub fn plain_set(args: &[Vec<u8>]) -> Option<(Vec<u8>, Vec<u8>)> {
        let [name, key, value] = args else {
            return None;
        };
        let fits = key.len() <= cosine_design::MAX_KEY_BYTES as usize
            && (value.len() as u64) < cosine_design::MAX_VALUE_BYTES;
        (name.eq_ignore_ascii_case(b"SET") && fits && Self::user_key(key).is_ok())
            .then(|| (key.clone(), store::string(value)))
    }

    fn user_key(key: &[u8]) -> Result<(), Reply> {
        if key.starts_with(INTERNAL) {
            Err(Reply::err(
                "ERR keys starting with the internal prefix are reserved",
            ))
        } else {
            Ok(())
        }
    }

    /// Runs one command.
    pub fn execute(&self, args: &[Vec<u8>]) -> (Reply, Control) {
        self.commands.fetch_add(1, Ordering::Relaxed);
        let Some(name) = args.first() else {
            return (Reply::err("ERR empty command"), Control::Continue);
        };
        let cmd = String::from_utf8_lossy(name).to_ascii_uppercase();
        let a = &args[1..];
        for k in self.keys_of(&cmd, a) {
            if let Err(r) = Self::user_key(k) {
                return (r, Control::Continue);
            }
        }
        let reply = match cmd.as_str() {
            "PING" => match a.len() {
                0 => Reply::Simple("PONG".into()),
                1 => Reply::bulk(a[0].clone()),
                _ => arity("ping"),
            },
            "ECHO" if a.len() == 1 => Reply::bulk(a[0].clone()),
            "QUIT" => return (Reply::ok(), Control::Close),
            "SHUTDOWN" => return (Reply::ok(), Control::Shutdown),
            "SELECT" if a.len() == 1 => {
                if a[0] == b"0" {
                    Reply::ok()
                } else {
                    Reply::err("ERR DB index is out of range (this server has one database)")
                }
            }
            "HELLO" => self.hello(a),
            "COMMAND" => self.command(a),
            "CONFIG" => self.config(a),
            "CLIENT" => match a
                .first()
                .map(|s| String::from_utf8_lossy(s).to_ascii_uppercase())
            {
                Some(s) if s == "GETNAME" => Reply::Bulk(None),
                Some(s) if s == "ID" => Reply::Integer(1),
                Some(_) => Reply::ok(),
                None => arity("client"),
            },
            "GET" if a.len() == 1 => self.get(&a[0]),
            "SET" if a.len() >= 2 => self.set(a),
            "SETNX" if a.len() == 2 => self.set(&[a[0].clone(), a[1].clone(), b"NX".to_vec()]),
            "DEL" | "UNLINK" if !a.is_empty() => self.del(a),
            "EXISTS" if !a.is_empty() => self.exists(a),
            "MGET" if !a.is_empty() => Reply::Array(Some(
                a.iter()
                    .map(|k| self.get(k))
                    .map(|r| match r {
                        Reply::Error(_) => Reply::Bulk(None),
                        other => other,
                    })
                    .collect(),
            )),
            "MSET" if !a.is_empty() && a.len().is_multiple_of(2) => self.mset(a),
            "INCR" if a.len() == 1 => self.incr(&a[0], 1),
            "DECR" if a.len() == 1 => self.incr(&a[0], -1),
            "INCRBY" | "DECRBY" if a.len() == 2 => match int_arg(&a[1]) {
                Some(d) => self.incr(&a[0], if cmd == "DECRBY" { -d } else { d }),
                None => Reply::err("ERR value is not an integer or out of range"),
            },
            "HSET" | "HMSET" if a.len() >= 3 && a.len() % 2 == 1 => self.hset(a, cmd == "HMSET"),
            "HGET" if a.len() == 2 => match self.load_hash(&a[0]) {
                Ok(h) => Reply::Bulk(h.get(&a[1]).cloned()),
                Err(r) => r,
            },
            "HMGET" if a.len() >= 2 => match self.load_hash(&a[0]) {
                Ok(h) => Reply::Array(Some(
                    a[1..]
                        .iter()
                        .map(|f| Reply::Bulk(h.get(f).cloned()))
                        .collect(),
                )),
                Err(r) => r,
            },
            "HGETALL" if a.len() == 1 => match self.load_hash(&a[0]) {
                Ok(h) => Reply::Array(Some(
                    h.into_iter()
                        .flat_map(|(f, v)| [Reply::bulk(f), Reply::bulk(v)])
                        .collect(),
                )),
                Err(r) => r,
            },
            "HLEN" if a.len() == 1 => match self.load_hash(&a[0]) {
                Ok(h) => Reply::Integer(h.len() as i64),
                Err(r) => r,
            },
            "HEXISTS" if a.len() == 2 => match self.load_hash(&a[0]) {
                Ok(h) => Reply::Integer(h.contains_key(&a[1]) as i64),
                Err(r) => r,
            },
            "HDEL" if a.len() >= 2 => self.hdel(a),
            "ZADD" if a.len() >= 3 && a.len() % 2 == 1 => self.zadd(a),
            "ZREM" if a.len() >= 2 => self.zrem(a),
            "ZCARD" if a.len() == 1 => self.zcard(&a[0]),
            "ZRANGEBYSCORE" if a.len() >= 3 => self.zrangebyscore(a),
            "SCAN" if !a.is_empty() => self.scan_cmd(a),
            "KEYS" if a.len() == 1 => self.keys(&a[0]),
            "RANGE" if a.len() >= 2 => self.range(a),
            "DBSIZE" if a.is_empty() => match self.user_keys(None, usize::MAX) {
                Ok(v) => Reply::Integer(v.len() as i64),
                Err(r) => r,
            },
            "FLUSHALL" | "FLUSHDB" => self.flushall(),
            "INFO" => Reply::bulk(self.info()),
            "ECHO" | "SELECT" | "GET" | "SET" | "SETNX" | "DEL" | "UNLINK" | "EXISTS" | "MGET"
            | "MSET" | "INCR" | "DECR" | "INCRBY" | "DECRBY" | "HSET" | "HMSET" | "HGET"
            | "HMGET" | "HGETALL" | "HLEN" | "HEXISTS" | "HDEL" | "ZADD" | "ZREM" | "ZCARD"
            | "ZRANGEBYSCORE" | "SCAN" | "KEYS" | "RANGE" | "DBSIZE" => arity(&cmd.to_lowercase()),
            _ => Reply::err(format!(
                "ERR unknown command '{}', with args beginning with: {}",
                String::from_utf8_lossy(name),
                a.iter()
                    .take(3)
                    .map(|x| format!("'{}'", String::from_utf8_lossy(x)))
                    .collect::<Vec<_>>()
                    .join(" ")
            )),
        };
        (reply, Control::Continue)
    }

    fn keys_of<'a>(&self, cmd: &str, a: &'a [Vec<u8>]) -> Vec<&'a Vec<u8>> {
        match cmd {
            "GET" | "SET" | "SETNX" | "INCR" | "DECR" | "INCRBY" | "DECRBY" | "HSET" | "HMSET"
            | "HGET" | "HMGET" | "HGETALL" | "HLEN" | "HEXISTS" | "HDEL" | "ZADD" | "ZREM"
            | "ZCARD" | "ZRANGEBYSCORE" => a.iter().take(1).collect(),
            "DEL" | "UNLINK" | "EXISTS" | "MGET" => a.iter().collect(),
            "MSET" => a.iter().step_by(2).collect(),
            _ => Vec::new(),
        }
    }

    fn exists(&self, keys: &[Vec<u8>]) -> Reply {
        let mut n = 0;
        for k in keys {
            n += tryr!(self.engine.get(k)).is_some() as i64;
        }
        Reply::Integer(n)
    }

    fn mset(&self, a: &[Vec<u8>]) -> Reply {
        let values: Vec<Vec<u8>> = a.chunks(2).map(|kv| store::string(&kv[1])).collect();
        let batch: Vec<(&[u8], Option<&[u8]>)> = a
            .chunks(2)
            .zip(&values)
            .map(|(kv, v)| (kv[0].as_slice(), Some(v.as_slice())))
            .collect();
        tryr!(self.engine.write_batch(&batch));
        Reply::ok()
    }

    fn get(&self, key: &[u8]) -> Reply {
        match tryr!(self.engine.get(key)) {
            None => Reply::Bulk(None),
            Some(v) if v.first() == Some(&STRING) => Reply::bulk(v[1..].to_vec()),
            Some(_) => Reply::err(WRONGTYPE),
        }
    }

    fn set(&self, a: &[Vec<u8>]) -> Reply {
        let (key, value) = (&a[0], &a[1]);
        let mut nx = false;
        let mut xx = false;
        let mut get = false;
        let mut i = 2;
        while i < a.len() {
            match String::from_utf8_lossy(&a[i]).to_ascii_uppercase().as_str() {
                "NX" => nx = true,
                "XX" => xx = true,
                "GET" => get = true,
                "KEEPTTL" => {}
                "EX" | "PX" | "EXAT" | "PXAT" => {
                    return Reply::err("ERR expiry is not supported by this engine")
                }
                _ => return Reply::err("ERR syntax error"),
            }
            i += 1;
        }
        if nx && xx {
            return Reply::err("ERR syntax error");
        }
        if !(nx || xx || get) {
            // a plain SET overwrites whatever is there: one blind write
            tryr!(self.engine.put(key, &store::string(value)));
            return Reply::ok();
        }
        let mut old: Option<Vec<u8>> = None;
        let mut wrong = false;
        let mut written = false;
        let stored = store::string(value);
        let r = self.engine.read_modify_write(key, |cur| {
            if get && cur.is_some_and(|c| c.first() != Some(&STRING)) {
                wrong = true;
                return cur.map(|c| c.to_vec());
            }
            old = cur.map(|c| c.to_vec());
            if (nx && cur.is_some()) || (xx && cur.is_none()) {
                return cur.map(|c| c.to_vec());
            }
            written = true;
            Some(stored.clone())
        });
        tryr!(r);
        if wrong {
            return Reply::err(WRONGTYPE);
        }
        if get {
            return Reply::Bulk(old.map(|o| o[1..].to_vec()));
        }
        if written {
            Reply::ok()
        } else {
            Reply::Bulk(None)
        }
    }

    fn del(&self, keys: &[Vec<u8>]) -> Reply {
        let mut n = 0;
        for k in keys {
            let cur = tryr!(self.engine.get(k));
            if let Some(v) = cur {
                if v.first() == Some(&ZSET) {
                    for prefix in [store::zscore_prefix(k), store::zmember_prefix(k)] {
                        let entries = tryr!(self
                            .engine
                            .scan(prefix.clone()..store::prefix_end(&prefix), usize::MAX));
                        for (ik, _) in entries {
                            tryr!(self.engine.delete(&ik));
                        }
                    }
                }
                tryr!(self.engine.delete(k));
                n += 1;
            }
        }
        Reply::Integer(n)
    }

    fn incr(&self, key: &[u8], by: i64) -> Reply {
        let mut outcome: Result<i64, &'static str> = Ok(0);
        let r = self.engine.read_modify_write(key, |cur| {
            let current = match cur {
                None => 0,
                Some(v) if v.first() == Some(&STRING) => match std::str::from_utf8(&v[1..])
                    .ok()
                    .and_then(|s| s.parse::<i64>().ok())
                {
                    Some(x) => x,
                    None => {
                        outcome = Err("ERR value is not an integer or out of range");
                        return Some(v.to_vec());
                    }
                },
                Some(v) => {
                    outcome = Err(WRONGTYPE);
                    return Some(v.to_vec());
                }
            };
            match current.checked_add(by) {
                Some(n) => {
                    outcome = Ok(n);
                    Some(store::string(n.to_string().as_bytes()))
                }
                None => {
                    outcome = Err("ERR increment or decrement would overflow");
                    cur.map(|c| c.to_vec())
                }
            }
        });
        tryr!(r);
        match outcome {
            Ok(n) => Reply::Integer(n),
            Err(e) => Reply::err(e),
        }
    }

    fn load_hash(&self, key: &[u8]) -> Result<BTreeMap<Vec<u8>, Vec<u8>>, Reply> {
        match self.engine.get(key).map_err(engine_err)? {
            None => Ok(BTreeMap::new()),
            Some(v) if v.first() == Some(&HASH) => store::decode_hash(&v[1..])
                .ok_or_else(|| Reply::err("ERR stored hash does not decode")),
            Some(_) => Err(Reply::err(WRONGTYPE)),
        }
    }

    fn hset(&self, a: &[Vec<u8>], hmset: bool) -> Reply {
        let mut outcome: Result<i64, Reply> = Ok(0);
        let r = self.engine.read_modify_write(&a[0], |cur| {
            let mut h = match cur {
                None => BTreeMap::new(),
                Some(v) if v.first() == Some(&HASH) => match store::decode_hash(&v[1..]) {
                    Some(h) => h,
                    None => {
                        outcome = Err(Reply::err("ERR stored hash does not decode"));
                        return Some(v.to_vec());
                    }
                },
                Some(v) => {
                    outcome = Err(Reply::err(WRONGTYPE));
                    return Some(v.to_vec());
                }
            };
            let mut added = 0;
            for fv in a[1..].chunks(2) {
                added += h.insert(fv[0].clone(), fv[1].clone()).is_none() as i64;
            }
            outcome = Ok(added);
            Some(store::hash(&h))
        });
        tryr!(r);
        match outcome {
            Ok(n) if hmset => {
                let _ = n;
                Reply::ok()
            }
            Ok(n) => Reply::Integer(n),
            Err(e) => e,
        }
    }

    fn hdel(&self, a: &[Vec<u8>]) -> Reply {
        let mut outcome: Result<i64, Reply> = Ok(0);
        let r = self.engine.read_modify_write(&a[0], |cur| {
            let v = cur?;
            if v.first() != Some(&HASH) {
                outcome = Err(Reply::err(WRONGTYPE));
                return Some(v.to_vec());
            }
            let Some(mut h) = store::decode_hash(&v[1..]) else {
                outcome = Err(Reply::err("ERR stored hash does not decode"));
                return Some(v.to_vec());
            };
            let removed = a[1..].iter().filter(|f| h.remove(*f).is_some()).count() as i64;
            outcome = Ok(removed);
            if h.is_empty() {
                None
            } else {
                Some(store::hash(&h))
            }
        });
        tryr!(r);
        match outcome {
            Ok(n) => Reply::Integer(n),
            Err(e) => e,
        }
    }

    fn zset_marker(&self, key: &[u8]) -> Result<bool, Reply> {
        match self.engine.get(key).map_err(engine_err)? {
            None => Ok(false),
            Some(v) if v.first() == Some(&ZSET) => Ok(true),
            Some(_) => Err(Reply::err(WRONGTYPE)),
        }
    }

    fn zadd(&self, a: &[Vec<u8>]) -> Reply {
        let key = &a[0];
        let mut pairs = Vec::new();
        for sm in a[1..].chunks(2) {
            match float_arg(&sm[0]) {
                Some(s) => pairs.push((s, sm[1].clone())),
                None => return Reply::err("ERR value is not a valid float"),
            }
        }
        if let Err(r) = self.zset_marker(key) {
            return r;
        }
        tryr!(self.engine.put(key, &[ZSET]));
        let mut added = 0;
        for (score, member) in pairs {
            let mk = store::zmember_key(key, &member);
            match tryr!(self.engine.get(&mk)) {
                Some(old) => {
                    if let Some(os) = store::score_of(&old) {
                        tryr!(self.engine.delete(&store::zscore_key(key, os, &member)));
                    }
                }
                None => added += 1,
            }
            tryr!(self.engine.put(&mk, &store::score_bytes(score)));
            tryr!(self
                .engine
                .put(&store::zscore_key(key, score, &member), b""));
        }
        Reply::Integer(added)
    }

    fn zrem(&self, a: &[Vec<u8>]) -> Reply {
        let key = &a[0];
        match self.zset_marker(key) {
            Ok(false) => return Reply::Integer(0),
            Err(r) => return r,
            Ok(true) => {}
        }
        let mut removed = 0;
        for member in &a[1..] {
            let mk = store::zmember_key(key, member);
            if let Some(old) = tryr!(self.engine.get(&mk)) {
                if let Some(os) = store::score_of(&old) {
                    tryr!(self.engine.delete(&store::zscore_key(key, os, member)));
                }
                tryr!(self.engine.delete(&mk));
                removed += 1;
            }
        }
        let prefix = store::zmember_prefix(key);
        if tryr!(self
            .engine
            .scan(prefix.clone()..store::prefix_end(&prefix), 1))
        .is_empty()
        {
            tryr!(self.engine.delete(key));
        }
        Reply::Integer(removed)
    }

    fn zcard(&self, key: &[u8]) -> Reply {
        match self.zset_marker(key) {
            Ok(false) => Reply::Integer(0),
            Err(r) => r,
            Ok(true) => {
                let prefix = store::zmember_prefix(key);
                Reply::Integer(
                    tryr!(self
                        .engine
                        .scan(prefix.clone()..store::prefix_end(&prefix), usize::MAX))
                    .len() as i64,
                )
            }
        }
    }

    fn zrangebyscore(&self, a: &[Vec<u8>]) -> Reply {
        let key = &a[0];
        let bound = |b: &[u8]| -> Option<(f64, bool)> {
            match b.strip_prefix(b"(") {
                Some(rest) => float_arg(rest).map(|x| (x, true)),
                None => float_arg(b).map(|x| (x, false)),
            }
        };
        let (Some((min, min_ex)), Some((max, max_ex))) = (bound(&a[1]), bound(&a[2])) else {
            return Reply::err("ERR min or max is not a float");
        };
        let mut with_scores = false;
        let mut offset = 0usize;
        let mut count = usize::MAX;
        let mut i = 3;
        while i < a.len() {
            match String::from_utf8_lossy(&a[i]).to_ascii_uppercase().as_str() {
                "WITHSCORES" => i += 1,
                "LIMIT" if i + 2 < a.len() => {
                    let (Some(o), Some(c)) = (int_arg(&a[i + 1]), int_arg(&a[i + 2])) else {
                        return Reply::err("ERR value is not an integer or out of range");
                    };
                    offset = o.max(0) as usize;
                    count = if c < 0 { usize::MAX } else { c as usize };
                    i += 3;
                    continue;
                }
                _ => return Reply::err("ERR syntax error"),
            }
            with_scores = true;
        }
        match self.zset_marker(key) {
            Ok(false) => return Reply::Array(Some(Vec::new())),
            Err(r) => return r,
            Ok(true) => {}
        }
        let prefix = store::zscore_prefix(key);
        let mut start = prefix.clone();
        start.extend_from_slice(&store::score_bytes(min));
        let entries = tryr!(self.engine.scan(
            start..store::prefix_end(&prefix),
            offset.saturating_add(count).saturating_add(64)
        ));
        let mut out = Vec::new();
        let mut skipped = 0;
        for (ik, _) in entries {
            let rest = &ik[prefix.len()..];
            let Some(score) = store::score_of(rest) else {
                continue;
            };
            if (min_ex && score <= min) || score < min {
                continue;
            }
            if score > max || (max_ex && score >= max) {
                break;
            }
            if skipped < offset {
                skipped += 1;
                continue;
            }
            if out.len() / if with_scores { 2 } else { 1 } >= count {
                break;
            }
            out.push(Reply::bulk(rest[8..].to_vec()));
            if with_scores {
                out.push(Reply::bulk(format!("{score}")));
            }
        }
        Reply::Array(Some(out))
    }

    /// User keys from `after` (exclusive), up to `limit`, skipping internal keys.
    fn user_keys(&self, after: Option<&[u8]>, limit: usize) -> Result<Vec<KeyValue>, Reply> {
        let mut out = Vec::new();
        let mut cursor: Option<Vec<u8>> = after.map(|a| a.to_vec());
        loop {
            let batch = match &cursor {
                Some(c) => self.engine.scan(
                    (
                        std::ops::Bound::Excluded(c.clone()),
                        std::ops::Bound::Unbounded,
                    ),
                    4096,
                ),
                None => self.engine.scan(.., 4096),
            }
            .map_err(engine_err)?;
            let done = batch.len() < 4096;
            for (k, v) in batch {
                cursor = Some(k.clone());
                if k.starts_with(INTERNAL) {
                    continue;
                }
                out.push((k, v));
                if out.len() >= limit {
                    return Ok(out);
                }
            }
            if done {
                return Ok(out);
            }
        }
    }

    fn scan_cmd(&self, a: &[Vec<u8>]) -> Reply {
        let cursor = &a[0];
        let after = if cursor.as_slice() == b"0" {
            None
        } else {
            match hex_decode(cursor) {
                Some(k) => Some(k),
                None => return Reply::err("ERR invalid cursor"),
            }
        };
        let mut pattern: Option<Vec<u8>> = None;
        let mut count = 10usize;
        let mut i = 1;
        while i + 1 < a.len() {
            match String::from_utf8_lossy(&a[i]).to_ascii_uppercase().as_str() {
                "MATCH" => pattern = Some(a[i + 1].clone()),
                "COUNT" => match int_arg(&a[i + 1]) {
                    Some(c) if c > 0 => count = c as usize,
                    _ => return Reply::err("ERR value is not an integer or out of range"),
                },
                "TYPE" => {}
                _ => return Reply::err("ERR syntax error"),
            }
            i += 2;
        }
        if i != a.len() {
            return Reply::err("ERR syntax error");
        }
        let keys = match self.user_keys(after.as_deref(), count) {
            Ok(k) => k,
            Err(r) => return r,
        };
        let next = if keys.len() < count {
            b"0".to_vec()
        } else {
            hex_encode(&keys[keys.len() - 1].0).into_bytes()
        };
        let matched = keys
            .into_iter()
            .filter(|(k, _)| pattern.as_ref().is_none_or(|p| store::glob(p, k)))
            .map(|(k, _)| Reply::bulk(k))
            .collect();
        Reply::Array(Some(vec![Reply::bulk(next), Reply::Array(Some(matched))]))
    }

    fn keys(&self, pattern: &[u8]) -> Reply {
        match self.user_keys(None, usize::MAX) {
            Ok(v) => Reply::Array(Some(
                v.into_iter()
                    .filter(|(k, _)| store::glob(pattern, k))
                    .map(|(k, _)| Reply::bulk(k))
                    .collect(),
            )),
            Err(r) => r,
        }
    }

    /// RANGE start end [LIMIT n]: string entries with start ≤ key < end (end "+" = no end), in key order, as a
    /// flat array of key, value.
    fn range(&self, a: &[Vec<u8>]) -> Reply {
        let mut limit = 1000usize;
        if a.len() == 4 && a[2].eq_ignore_ascii_case(b"LIMIT") {
            match int_arg(&a[3]) {
                Some(n) if n > 0 => limit = n as usize,
                _ => return Reply::err("ERR value is not an integer or out of range"),
            }
        } else if a.len() != 2 {
            return Reply::err("ERR syntax error: RANGE start end [LIMIT n]");
        }
        let start = a[0].clone();
        let entries = if a[1].as_slice() == b"+" {
            self.engine.scan(start.., usize::MAX)
        } else {
            self.engine.scan(start..a[1].clone(), usize::MAX)
        };
        let entries = tryr!(entries);
        let mut out = Vec::new();
        for (k, v) in entries {
            if k.starts_with(INTERNAL) || v.first() != Some(&STRING) {
                continue;
            }
            out.push(Reply::bulk(k));
            out.push(Reply::bulk(v[1..].to_vec()));
            if out.len() / 2 >= limit {
                break;
            }
        }
        Reply::Array(Some(out))
    }

    fn flushall(&self) -> Reply {
        loop {
            let batch = tryr!(self.engine.scan(.., 4096));
            if batch.is_empty() {
                return Reply::ok();
            }
            for (k, _) in batch {
                tryr!(self.engine.delete(&k));
            }
        }
    }

    fn hello(&self, a: &[Vec<u8>]) -> Reply {
        match a.first().map(|v| int_arg(v)) {
            Some(Some(3)) => Reply::err("NOPROTO this server speaks RESP2 only"),
            Some(Some(2)) | None => Reply::Array(Some(vec![
                Reply::bulk("server"),
                Reply::bulk("cosine"),
                Reply::bulk("version"),
                Reply::bulk(env!("CARGO_PKG_VERSION")),
                Reply::bulk("proto"),
                Reply::Integer(2),
                Reply::bulk("mode"),
                Reply::bulk("standalone"),
            ])),
            _ => Reply::err("NOPROTO unsupported protocol version"),
        }
    }

    fn command(&self, a: &[Vec<u8>]) -> Reply {
        match a
            .first()
            .map(|s| String::from_utf8_lossy(s).to_ascii_uppercase())
        {
            Some(s) if s == "COUNT" => Reply::Integer(COMMANDS.len() as i64),
            Some(s) if s == "DOCS" => Reply::Array(Some(Vec::new())),
            _ => Reply::Array(Some(
                COMMANDS
                    .iter()
                    .map(|(name, arity)| {
                        Reply::Array(Some(vec![
                            Reply::bulk(name.to_lowercase()),
                            Reply::Integer(*arity),
                            Reply::Array(Some(Vec::new())),
                            Reply::Integer(if *arity == 1 { 0 } else { 1 }),
                            Reply::Integer(if *arity == 1 { 0 } else { 1 }),
                            Reply::Integer(if *arity == 1 { 0 } else { 1 }),
                        ]))
                    })
                    .collect(),
            )),
        }
    }

    fn config(&self, a: &[Vec<u8>]) -> Reply {
        match a
            .first()
            .map(|s| String::from_utf8_lossy(s).to_ascii_uppercase())
        {
            Some(s) if s == "GET" => {
                let key = a
                    .get(1)
                    .map(|k| String::from_utf8_lossy(k).to_string())
                    .unwrap_or_default();
                let value = match key.as_str() {
                    "save" => Some(""),
                    "appendonly" => Some("yes"),
                    "databases" => Some("1"),
                    _ => None,
                };
                Reply::Array(Some(match value {
                    Some(v) => vec![Reply::bulk(key), Reply::bulk(v)],
                    None => Vec::new(),
                }))
            }
            Some(s) if s == "SET" || s == "RESETSTAT" => Reply::ok(),
            _ => Reply::err("ERR CONFIG subcommand must be GET, SET or RESETSTAT"),
        }
    }

    /// The INFO text: server, design, engine stats, memory.
    pub fn info(&self) -> String {
        let s = self.engine.stats();
        let d = &self.design;
        let mut out = String::new();
        out.push_str("# Server\r\n");
        out.push_str(&format!(
            "cosine_version:{}\r\nredis_version:7.0.0\r\nuptime_in_seconds:{}\r\n",
            env!("CARGO_PKG_VERSION"),
            self.started.elapsed().as_secs()
        ));
        out.push_str(&format!(
            "total_connections_received:{}\r\ntotal_commands_processed:{}\r\n",
            self.connections.load(Ordering::Relaxed),
            self.commands.load(Ordering::Relaxed)
        ));
        out.push_str("\r\n# Design\r\n");
        out.push_str(&format!(
            "class:{}\r\nsize_ratio:{}\r\nhot_runs:{}\r\ncold_runs:{}\r\nblock_bytes:{}\r\nbuffer_bytes:{}\r\nfilter_bytes:{}\r\nfence_bytes:{}\r\ncompaction:{:?}\r\n",
            d.class.map(|c| c.to_string()).unwrap_or_else(|| "unrecorded".into()),
            d.size_ratio,
            d.hot_runs,
            d.cold_runs,
            d.block_bytes,
            d.buffer_bytes,
            d.filter_bytes,
            d.fence_bytes,
            d.compaction
        ));
        out.push_str("\r\n# Engine\r\n");
        out.push_str(&format!(
            "levels:{}\r\ndisk_bytes:{}\r\nbytes_flushed:{}\r\nbytes_compacted_written:{}\r\nwrite_amplification:{:.3}\r\nspace_amplification:{:.3}\r\nblock_reads:{}\r\nindex_reads:{}\r\nfilter_probes:{}\r\nfalse_positives:{}\r\n",
            s.levels.len(),
            s.disk_bytes,
            s.bytes_flushed,
            s.bytes_compacted_written,
            s.write_amplification,
            s.space_amplification,
            s.block_reads(),
            s.index_reads(),
            s.filter_probes(),
            s.false_positives()
        ));
        for l in &s.levels {
            out.push_str(&format!(
                "level{}:runs={},files={},bytes={},entries={},hot={},resident_runs={},block_reads={},block_writes={}\r\n",
                l.level, l.runs, l.files, l.bytes, l.entries, l.hot as u8, l.resident_runs, l.io.block_reads, l.io.block_writes
            ));
        }
        out.push_str("\r\n# Memory\r\n");
        out.push_str(&format!(
            "buffer_bytes:{}\r\nfilter_bytes:{}\r\nfence_bytes:{}\r\nbudget_bytes:{}\r\n",
            s.memory.buffer_bytes,
            s.memory.filter_bytes,
            s.memory.fence_bytes,
            s.memory.budget_bytes
        ));
        out
    }
}

/// Commands and their Redis arity (for COMMAND).
const COMMANDS: &[(&str, i64)] = &[
    ("PING", -1),
    ("ECHO", 2),
    ("QUIT", 1),
    ("SHUTDOWN", -1),
    ("SELECT", 2),
    ("HELLO", -1),
    ("COMMAND", -1),
    ("CONFIG", -2),
    ("CLIENT", -2),
    ("GET", 2),
    ("SET", -3),
    ("SETNX", 3),
    ("DEL", -2),
    ("UNLINK", -2),
    ("EXISTS", -2),
    ("MGET", -2),
    ("MSET", -3),
    ("INCR", 2),
    ("DECR", 2),
    ("INCRBY", 3),
    ("DECRBY", 3),
    ("HSET", -4),
    ("HMSET", -4),
    ("HGET", 3),
    ("HMGET", -3),
    ("HGETALL", 2),
    ("HLEN", 2),
    ("HEXISTS", 3),
    ("HDEL", -3),
    ("ZADD", -4),
    ("ZREM", -3),
    ("ZCARD", 2),
    ("ZRANGEBYSCORE", -4),
    ("SCAN", -2),
    ("KEYS", 2),
    ("RANGE", -3),
    ("DBSIZE", 1),
    ("FLUSHALL", -1),
    ("FLUSHDB", -1),
    ("INFO", -1),
];

fn hex_encode(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

fn hex_decode(s: &[u8]) -> Option<Vec<u8>> {
    if !s.len().is_multiple_of(2) {
        return None;
    }
    s.chunks(2)
        .map(|c| u8::from_str_radix(std::str::from_utf8(c).ok()?, 16).ok())
        .collect()
}

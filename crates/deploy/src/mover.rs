//! Moving keys when a deployment changes shape (`cosine rebalance`), in two passes around the proxy's switch so
//! that reads keep finding every key and no write is lost:
//!
//! 1. [`copy`], with the old proxy serving: every key on an old shard whose owner on the new ring is another
//!    shard is copied there; the old shard keeps it. A digest of each copied value goes to a state file.
//! 2. The application's proxies switch to the new configuration.
//! 3. [`finish`]: the old shards are scanned again. A moved key whose old copy changed after the copy (a write
//!    made before the switch) is copied again, unless the new shard's copy changed too (a write made through the
//!    new proxy, which is newer); a key created before the switch is copied unless the new shard has it already;
//!    a key deleted before the switch is deleted on the new shard unless it was written there since. Then every
//!    moved key is deleted from its old shard.
//!
//! What this cannot order: a write to a key through a proxy that has not switched yet, made while `finish` runs.
//! Switch every proxy before step 3.

use crate::proxy::{ProxyConfig, ProxyServer};
use crate::Error;
use md5::{Digest, Md5};
use std::collections::HashMap;
use std::io::{BufRead, Write};
use std::path::Path;
use std::time::Duration;

/// A key's value, of any type the server stores.
#[derive(Clone, Debug, PartialEq)]
enum Value {
    Str(Vec<u8>),
    Hash(Vec<Vec<u8>>),
    Zset(Vec<Vec<u8>>),
}

impl Value {
    fn digest(&self) -> String {
        let mut h = Md5::new();
        let (tag, parts): (&[u8], Vec<&[u8]>) = match self {
            Value::Str(v) => (b"s", vec![v.as_slice()]),
            Value::Hash(f) => (b"h", f.iter().map(|x| x.as_slice()).collect()),
            Value::Zset(f) => (b"z", f.iter().map(|x| x.as_slice()).collect()),
        };
        h.update(tag);
        for p in parts {
            h.update((p.len() as u64).to_le_bytes());
            h.update(p);
        }
        h.finalize().iter().map(|b| format!("{b:02x}")).collect()
    }
}

/// What a pass did.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Report {
    /// Keys read on the old shards.
    pub scanned: u64,
    /// Keys whose shard changes.
    pub moving: u64,
    /// Values written to a new shard.
    pub copied: u64,
    /// Keys left alone on a new shard because a newer write reached it through the new proxy.
    pub newer_kept: u64,
    /// Keys deleted from an old shard (or, deleted before the switch, from the new one).
    pub deleted: u64,
    /// Moved keys per (old shard, new shard).
    pub pairs: Vec<(String, String, u64)>,
}

impl std::fmt::Display for Report {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{} keys scanned, {} change shard ({:.1}%), {} values written, {} left for a newer write, {} deleted",
            self.scanned,
            self.moving,
            100.0 * self.moving as f64 / self.scanned.max(1) as f64,
            self.copied,
            self.newer_kept,
            self.deleted
        )?;
        for (a, b, n) in &self.pairs {
            write!(f, "\n  {a} -> {b}: {n}")?;
        }
        Ok(())
    }
}

fn connect(s: &ProxyServer) -> Result<redis::Connection, Error> {
    let client = redis::Client::open(format!("redis://{}/", s.addr()))
        .map_err(|e| Error::Shard(s.name.clone(), s.addr(), e.to_string()))?;
    client
        .get_connection_with_timeout(Duration::from_secs(10))
        .map_err(|e| Error::Shard(s.name.clone(), s.addr(), e.to_string()))
}

struct Shard<'a> {
    server: &'a ProxyServer,
    conn: redis::Connection,
}

impl Shard<'_> {
    fn err(&self, e: redis::RedisError) -> Error {
        Error::Shard(self.server.name.clone(), self.server.addr(), e.to_string())
    }

    /// Every key, in batches.
    fn keys(&mut self) -> Result<Vec<Vec<u8>>, Error> {
        let mut cursor: Vec<u8> = b"0".to_vec();
        let mut out = Vec::new();
        loop {
            let (next, keys): (Vec<u8>, Vec<Vec<u8>>) = redis::cmd("SCAN")
                .arg(&cursor)
                .arg("COUNT")
                .arg(1000)
                .query(&mut self.conn)
                .map_err(|e| self.err(e))?;
            out.extend(keys);
            if next == b"0" {
                return Ok(out);
            }
            cursor = next;
        }
    }

    fn get(&mut self, key: &[u8]) -> Result<Option<Value>, Error> {
        match redis::cmd("GET")
            .arg(key)
            .query::<Option<Vec<u8>>>(&mut self.conn)
        {
            Ok(v) => return Ok(v.map(Value::Str)),
            Err(e) if e.to_string().contains("WRONGTYPE") => {}
            Err(e) => return Err(self.err(e)),
        }
        match redis::cmd("HGETALL")
            .arg(key)
            .query::<Vec<Vec<u8>>>(&mut self.conn)
        {
            Ok(f) if !f.is_empty() => return Ok(Some(Value::Hash(f))),
            Ok(_) => {}
            Err(e) if e.to_string().contains("WRONGTYPE") => {}
            Err(e) => return Err(self.err(e)),
        }
        let z: Vec<Vec<u8>> = redis::cmd("ZRANGEBYSCORE")
            .arg(key)
            .arg("-inf")
            .arg("+inf")
            .arg("WITHSCORES")
            .query(&mut self.conn)
            .map_err(|e| self.err(e))?;
        Ok((!z.is_empty()).then_some(Value::Zset(z)))
    }

    fn put(&mut self, key: &[u8], v: &Value) -> Result<(), Error> {
        // replace whole: a hash or sorted set must not keep fields the source no longer has
        self.del(key)?;
        let c = match v {
            Value::Str(s) => {
                let mut c = redis::cmd("SET");
                c.arg(key).arg(s);
                c
            }
            Value::Hash(f) => {
                let mut c = redis::cmd("HSET");
                c.arg(key);
                for x in f {
                    c.arg(x);
                }
                c
            }
            Value::Zset(f) => {
                // ZRANGEBYSCORE gives member, score; ZADD takes score, member
                let mut c = redis::cmd("ZADD");
                c.arg(key);
                for pair in f.chunks(2) {
                    if let [m, s] = pair {
                        c.arg(s).arg(m);
                    }
                }
                c
            }
        };
        c.query::<redis::Value>(&mut self.conn)
            .map(drop)
            .map_err(|e| self.err(e))
    }

    fn del(&mut self, key: &[u8]) -> Result<(), Error> {
        redis::cmd("DEL")
            .arg(key)
            .query::<i64>(&mut self.conn)
            .map(drop)
            .map_err(|e| self.err(e))
    }
}

fn shards(c: &ProxyConfig) -> Result<Vec<Shard<'_>>, Error> {
    c.servers
        .iter()
        .map(|s| {
            Ok(Shard {
                server: s,
                conn: connect(s)?,
            })
        })
        .collect()
}

/// The digests of what [`copy`] wrote, by key (hex-encoded keys, one `key digest` line each).
fn load_state(path: &Path) -> Result<HashMap<Vec<u8>, String>, Error> {
    let f = std::fs::File::open(path)?;
    let mut m = HashMap::new();
    for (n, line) in std::io::BufReader::new(f).lines().enumerate() {
        let line = line?;
        let (k, d) = line
            .split_once(' ')
            .ok_or_else(|| Error::State(format!("{}: line {}", path.display(), n + 1)))?;
        let key = (0..k.len())
            .step_by(2)
            .map(|i| k.get(i..i + 2).and_then(|h| u8::from_str_radix(h, 16).ok()))
            .collect::<Option<Vec<u8>>>()
            .ok_or_else(|| Error::State(format!("{}: line {}", path.display(), n + 1)))?;
        m.insert(key, d.to_string());
    }
    Ok(m)
}

fn check_names(old: &ProxyConfig, new: &ProxyConfig) -> Result<(), Error> {
    for s in &new.servers {
        if let Some(o) = old.servers.iter().find(|o| o.name == s.name) {
            if o.addr() != s.addr() {
                return Err(Error::Proxy(format!(
                    "{} is at {} in the old configuration and {} in the new: a shard that keeps its name keeps its address",
                    s.name,
                    o.addr(),
                    s.addr()
                )));
            }
        }
    }
    Ok(())
}

fn count_pair(r: &mut Report, a: &str, b: &str) {
    match r.pairs.iter_mut().find(|(x, y, _)| x == a && y == b) {
        Some(p) => p.2 += 1,
        None => r.pairs.push((a.to_string(), b.to_string(), 1)),
    }
}

/// Step 1: copies every key whose shard changes from `old` to `new` to its new shard, keeping the old copy, and
/// writes the copied values' digests to `state`.
pub fn copy(old: &ProxyConfig, new: &ProxyConfig, state: &Path) -> Result<Report, Error> {
    check_names(old, new)?;
    let ring = new.ring();
    let mut olds = shards(old)?;
    let mut news = shards(new)?;
    let mut out = std::io::BufWriter::new(std::fs::File::create(state)?);
    let mut r = Report::default();
    for o in olds.iter_mut() {
        for key in o.keys()? {
            r.scanned += 1;
            let Some(j) = ring.owner(&key) else { continue };
            if news[j].server.name == o.server.name {
                continue;
            }
            r.moving += 1;
            let Some(v) = o.get(&key)? else { continue };
            news[j].put(&key, &v)?;
            r.copied += 1;
            count_pair(&mut r, &o.server.name, &news[j].server.name);
            let hex: String = key.iter().map(|b| format!("{b:02x}")).collect();
            writeln!(out, "{hex} {}", v.digest())?;
        }
    }
    out.flush()?;
    Ok(r)
}

/// Step 3, after every proxy serves `new`: carries the writes the old shards took since [`copy`], unless a newer
/// write reached the new shard, then deletes every moved key from its old shard.
pub fn finish(old: &ProxyConfig, new: &ProxyConfig, state: &Path) -> Result<Report, Error> {
    check_names(old, new)?;
    let copied = load_state(state)?;
    let ring = new.ring();
    let mut olds = shards(old)?;
    let mut news = shards(new)?;
    let mut r = Report::default();
    let mut seen: HashMap<&[u8], ()> = HashMap::new();
    for o in olds.iter_mut() {
        for key in o.keys()? {
            r.scanned += 1;
            let Some(j) = ring.owner(&key) else { continue };
            if news[j].server.name == o.server.name {
                continue;
            }
            r.moving += 1;
            count_pair(&mut r, &o.server.name, &news[j].server.name);
            let old_value = o.get(&key)?;
            let new_value = news[j].get(&key)?;
            let untouched = match (copied.get(&key), &new_value) {
                // copied then: the new shard's copy is as written unless a newer write replaced it
                (Some(d), Some(v)) => v.digest() == *d,
                (Some(_), None) => false,
                // created on the old shard after the copy: the new shard has no newer write unless it has the key
                (None, v) => v.is_none(),
            };
            match (&old_value, untouched) {
                (Some(v), true) if new_value.as_ref() != Some(v) => {
                    news[j].put(&key, v)?;
                    r.copied += 1;
                }
                (_, false) => r.newer_kept += 1,
                _ => {}
            }
            o.del(&key)?;
            r.deleted += 1;
            if let Some((k, _)) = copied.get_key_value(key.as_slice()) {
                seen.insert(k.as_slice(), ());
            }
        }
    }
    // copied, then deleted on the old shard before the switch: delete the copy unless rewritten since
    for (key, d) in &copied {
        if seen.contains_key(key.as_slice()) {
            continue;
        }
        let Some(j) = ring.owner(key) else { continue };
        if let Some(v) = news[j].get(key)? {
            if v.digest() == *d {
                news[j].del(key)?;
                r.deleted += 1;
            } else {
                r.newer_kept += 1;
            }
        }
    }
    Ok(r)
}

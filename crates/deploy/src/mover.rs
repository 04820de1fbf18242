//! Moving keys when a deployment changes shape (`cosine rebalance`), in passes around the proxies' switch:
//!
//! 1. [`copy`], with the old proxy serving: every key on an old shard whose owner on the new ring is another
//!    shard is copied there; the old shard keeps it, so reads through the old proxy find everything. A digest of
//!    each copied value goes to a state file. `copy` may run again (say, right before the switch, with writers
//!    paused): it re-copies only the keys that changed on their old shard since, drops copies of keys deleted
//!    since, and never overwrites a value on a new shard that differs from what it copied there (a newer write).
//! 2. The application's proxies switch to the new configuration.
//! 3. [`finish`]: the same pass once more, then each moved key is deleted from its old shard (each deletion is
//!    journalled first, so a `finish` that stops part-way can run again without taking those keys for deletions
//!    made by clients).
//!
//! What this does not order: a read-modify-write (INCR, HSET of one field) made through the new proxy before
//! `finish` reads the value `copy` wrote, so a write made on the old shard after the last `copy` is kept only if
//! no such write came first. Pause writers from the last `copy` until the proxies have switched for none to be
//! lost; and switch every proxy before `finish`.

use crate::proxy::{ProxyConfig, ProxyServer};
use crate::Error;
use md5::{Digest, Md5};
use redis::IntoConnectionInfo;
use std::collections::{HashMap, HashSet};
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

/// A connection to one shard, authenticated with the deployment's password where it has one.
fn connect(s: &ProxyServer, password: Option<&str>) -> Result<redis::Connection, Error> {
    let mut info: redis::ConnectionInfo = format!("redis://{}/", s.addr())
        .as_str()
        .into_connection_info()
        .map_err(|e| Error::Shard(s.name.clone(), s.addr(), e.to_string()))?;
    info.redis.password = password.map(str::to_string);
    let client = redis::Client::open(info)
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

    /// One batch of keys from `cursor`, and the next cursor (`0` at the end).
    fn scan(&mut self, cursor: &[u8]) -> Result<(Vec<u8>, Vec<Vec<u8>>), Error> {
        redis::cmd("SCAN")
            .arg(cursor)
            .arg("COUNT")
            .arg(1000)
            .query(&mut self.conn)
            .map_err(|e| self.err(e))
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

    /// Writes `v` over `current` (what the key holds now): a string in one SET; a hash or sorted set by adding
    /// its fields, then removing the ones it does not have, so the key is never absent in between.
    fn put(&mut self, key: &[u8], v: &Value, current: Option<&Value>) -> Result<(), Error> {
        let same_type = matches!(
            (v, current),
            (Value::Hash(_), Some(Value::Hash(_)))
                | (Value::Zset(_), Some(Value::Zset(_)))
                | (_, None)
        );
        if !same_type && !matches!(v, Value::Str(_)) {
            self.del(key)?;
        }
        let fields =
            |f: &[Vec<u8>]| -> HashSet<Vec<u8>> { f.chunks(2).map(|p| p[0].clone()).collect() };
        let (c, extra) = match v {
            Value::Str(s) => {
                let mut c = redis::cmd("SET");
                c.arg(key).arg(s);
                (c, None)
            }
            Value::Hash(f) => {
                let mut c = redis::cmd("HSET");
                c.arg(key);
                for x in f {
                    c.arg(x);
                }
                let stale = match current {
                    Some(Value::Hash(cur)) => fields(cur).difference(&fields(f)).cloned().collect(),
                    _ => Vec::new(),
                };
                (c, Some(("HDEL", stale)))
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
                let stale = match current {
                    Some(Value::Zset(cur)) => fields(cur).difference(&fields(f)).cloned().collect(),
                    _ => Vec::new(),
                };
                (c, Some(("ZREM", stale)))
            }
        };
        c.query::<redis::Value>(&mut self.conn)
            .map_err(|e| self.err(e))?;
        if let Some((cmd, stale)) = extra {
            if !stale.is_empty() {
                let mut c = redis::cmd(cmd);
                c.arg(key);
                for f in stale {
                    c.arg(f);
                }
                c.query::<redis::Value>(&mut self.conn)
                    .map_err(|e| self.err(e))?;
            }
        }
        Ok(())
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
                conn: connect(s, c.redis_auth.as_deref())?,
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
        let key =
            unhex(k).ok_or_else(|| Error::State(format!("{}: line {}", path.display(), n + 1)))?;
        m.insert(key, d.to_string());
    }
    Ok(m)
}

/// A shard is one address: a name may move to another address only between deployments, never within a
/// rebalance, and one address must not carry two names (the mover would copy a server onto itself and then
/// delete the only copy).
fn check_names(old: &ProxyConfig, new: &ProxyConfig) -> Result<(), Error> {
    for s in &new.servers {
        for o in &old.servers {
            if (o.name == s.name) != (o.addr() == s.addr()) {
                return Err(Error::Proxy(format!(
                    "{} at {} in the old configuration and {} at {} in the new: a shard keeps its name and its address through a rebalance",
                    o.name,
                    o.addr(),
                    s.name,
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

fn hex(key: &[u8]) -> String {
    key.iter().map(|b| format!("{b:02x}")).collect()
}

/// Keys listed one per line, hex-encoded (the journal of `finish`).
fn load_journal(path: &Path) -> Result<HashSet<Vec<u8>>, Error> {
    if !path.exists() {
        return Ok(HashSet::new());
    }
    let f = std::fs::File::open(path)?;
    let mut keys = HashSet::new();
    for (n, line) in std::io::BufReader::new(f).lines().enumerate() {
        let line = line?;
        keys.insert(
            unhex(line.trim())
                .ok_or_else(|| Error::State(format!("{}: line {}", path.display(), n + 1)))?,
        );
    }
    Ok(keys)
}

fn unhex(k: &str) -> Option<Vec<u8>> {
    if !k.len().is_multiple_of(2) {
        return None;
    }
    (0..k.len())
        .step_by(2)
        .map(|i| k.get(i..i + 2).and_then(|h| u8::from_str_radix(h, 16).ok()))
        .collect()
}

fn journal_path(state: &Path) -> std::path::PathBuf {
    let mut p = state.as_os_str().to_owned();
    p.push(".finished");
    p.into()
}

/// One pass over the old shards: carry each moving key whose new copy is still what this mover wrote (or that
/// the new shard lacks and this mover never copied), and with `delete`, journal and delete it on its old shard.
fn carry(
    old: &ProxyConfig,
    new: &ProxyConfig,
    state: &Path,
    delete: bool,
) -> Result<Report, Error> {
    check_names(old, new)?;
    let journal_file = journal_path(state);
    let mut copied = if state.exists() {
        load_state(state)?
    } else if delete {
        return Err(Error::State(format!(
            "{} does not exist: run `cosine rebalance copy` first",
            state.display()
        )));
    } else {
        HashMap::new()
    };
    let finished = load_journal(&journal_file)?;
    if !delete && !finished.is_empty() {
        return Err(Error::State(format!(
            "{} shows that finish has run: copying again could overwrite newer writes",
            journal_file.display()
        )));
    }
    let mut journal = if delete {
        Some(
            std::fs::OpenOptions::new()
                .create(true)
                .append(true)
                .open(&journal_file)?,
        )
    } else {
        None
    };
    let ring = new.ring();
    let mut olds = shards(old)?;
    let mut news = shards(new)?;
    let mut r = Report::default();
    let mut seen: HashSet<Vec<u8>> = HashSet::new();
    for o in olds.iter_mut() {
        let mut cursor = b"0".to_vec();
        loop {
            // a batch at a time; deleting keys already returned does not disturb the cursor (the last key)
            let (next, keys) = o.scan(&cursor)?;
            for key in keys {
                r.scanned += 1;
                let Some(j) = ring.owner(&key) else { continue };
                if news[j].server.addr() == o.server.addr() {
                    continue;
                }
                r.moving += 1;
                count_pair(&mut r, &o.server.name, &news[j].server.name);
                let old_value = o.get(&key)?;
                let new_value = news[j].get(&key)?;
                let untouched = match (copied.get(&key), &new_value) {
                    // copied: the new shard's copy is as written unless a newer write replaced it
                    (Some(d), Some(v)) => v.digest() == *d,
                    // copied, then deleted on the new shard: a newer delete
                    (Some(_), None) => false,
                    // never copied: the new shard has no newer write unless it has the key
                    (None, v) => v.is_none(),
                };
                match (&old_value, untouched) {
                    (Some(v), true) => {
                        if new_value.as_ref() != Some(v) {
                            news[j].put(&key, v, new_value.as_ref())?;
                            r.copied += 1;
                        }
                        copied.insert(key.clone(), v.digest());
                    }
                    (None, _) => {}
                    (Some(_), false) => r.newer_kept += 1,
                }
                if let Some(j) = journal.as_mut() {
                    writeln!(j, "{}", hex(&key))?;
                    j.sync_data()?;
                    o.del(&key)?;
                    r.deleted += 1;
                }
                seen.insert(key);
            }
            if next == b"0" {
                break;
            }
            cursor = next;
        }
    }
    // copied, then deleted on the old shard by a client: drop the copy unless written since
    let gone: Vec<Vec<u8>> = copied
        .keys()
        .filter(|k| !seen.contains(*k) && !finished.contains(*k))
        .cloned()
        .collect();
    for key in gone {
        let Some(j) = ring.owner(&key) else { continue };
        if let Some(v) = news[j].get(&key)? {
            if copied.get(&key) == Some(&v.digest()) {
                news[j].del(&key)?;
                r.deleted += 1;
            } else {
                r.newer_kept += 1;
            }
        }
        copied.remove(&key);
    }
    // the state: what the new shards hold as this mover wrote it
    let tmp = state.with_extension("tmp");
    let mut out = std::io::BufWriter::new(std::fs::File::create(&tmp)?);
    for (k, d) in &copied {
        writeln!(out, "{} {d}", hex(k))?;
    }
    out.flush()?;
    out.get_ref().sync_data()?;
    drop(out);
    std::fs::rename(&tmp, state)?;
    Ok(r)
}

/// Step 1 (and again, if wanted, right before the switch): copies every key whose shard changes from `old` to
/// `new` to its new shard, keeping the old copy, and records what it wrote in `state`.
pub fn copy(old: &ProxyConfig, new: &ProxyConfig, state: &Path) -> Result<Report, Error> {
    carry(old, new, state, false)
}

/// Step 3, after every proxy serves `new`: the copy pass once more, then each moved key deleted from its old
/// shard. Safe to run again if it stops part-way.
pub fn finish(old: &ProxyConfig, new: &ProxyConfig, state: &Path) -> Result<Report, Error> {
    carry(old, new, state, true)
}

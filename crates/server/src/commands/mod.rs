//! The commands: Redis semantics on the engine. Each runs to completion (the engine is synchronous); the
//! connection task runs point reads on the event loop and everything else on the blocking pool.

use crate::auth::{self, Access};
use crate::resp::{Protocol, Reply};
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
    /// Held shared by every command and group commit, and exclusively while EXEC runs a transaction, so that
    /// nothing interleaves with one.
    pub exclusive: Arc<parking_lot::RwLock<()>>,
    /// Who may run what: the password, the commands switched off, protected mode.
    pub access: Access,
}

/// One connection's state: its protocol, its open transaction, and whether it has authenticated.
#[derive(Debug)]
pub struct Session {
    /// The protocol its replies are in (HELLO switches it).
    pub proto: Protocol,
    /// Its transaction, after MULTI.
    pub tx: Option<Transaction>,
    /// Whether it may run commands: at once where no password is set, after AUTH or HELLO's AUTH otherwise.
    pub authed: bool,
}

impl Session {
    /// A new connection's state under `access`: RESP2, no transaction, authenticated where no password is set.
    pub fn new(access: &Access) -> Session {
        Session {
            proto: Protocol::Resp2,
            tx: None,
            authed: !access.requires_password(),
        }
    }
}

/// A connection's open transaction (after MULTI): the commands queued for EXEC, and whether one was refused
/// (EXEC then discards the transaction, as Redis does).
#[derive(Debug, Default)]
pub struct Transaction {
    queued: Vec<Vec<Vec<u8>>>,
    dirty: bool,
}

/// Whether a request is MULTI, EXEC, DISCARD, WATCH or UNWATCH: the connection then takes the ordered path.
pub fn is_transaction_command(args: &[Vec<u8>]) -> bool {
    args.first().is_some_and(|c| {
        [&b"MULTI"[..], b"EXEC", b"DISCARD", b"WATCH", b"UNWATCH"]
            .iter()
            .any(|t| c.eq_ignore_ascii_case(t))
    })
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

mod admin;
mod hashes;
mod keyspace;
mod strings;
mod zsets;

impl Db {
    /// A database over `engine`, open to every client (see [`Db::with_access`]).
    pub fn new(engine: Arc<Engine>, design: Design) -> Self {
        Self::with_access(engine, design, Access::default())
    }

    /// A database over `engine` under `access`.
    pub fn with_access(engine: Arc<Engine>, design: Design, access: Access) -> Self {
        Db {
            access,
            committer: crate::commit::Committer::default(),
            exclusive: Arc::new(parking_lot::RwLock::new(())),
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

    /// Whether every request may take a connection's fast paths (group-committed SETs, point reads on the event
    /// loop): none is switched off.
    pub fn all_enabled(&self, requests: &[Vec<Vec<u8>>]) -> bool {
        self.access.disabled().is_empty()
            || requests.iter().all(|a| {
                let cmd = a
                    .first()
                    .map(|c| String::from_utf8_lossy(c).to_ascii_uppercase())
                    .unwrap_or_default();
                !self.access.is_disabled(&cmd)
            })
    }

    /// Runs one request of a connection (see [`Session`]). Where a password is set, only AUTH, HELLO with AUTH
    /// and QUIT run before the connection authenticates (`NOAUTH` otherwise); a command switched off is
    /// refused. MULTI opens a transaction, the commands after it are checked and queued (`+QUEUED`), EXEC runs
    /// them with nothing else interleaving and answers their replies in one array, DISCARD drops them. Inside
    /// a transaction QUIT closes the connection at once, and SHUTDOWN, HELLO, AUTH and WATCH are refused and
    /// abort it, as in Redis; WATCH is refused outside one too (no optimistic locking here). HELLO switches
    /// the session's protocol before its reply, which is in the new one.
    pub fn execute_in(&self, session: &mut Session, args: &[Vec<u8>]) -> (Reply, Control) {
        let cmd = args
            .first()
            .map(|c| String::from_utf8_lossy(c).to_ascii_uppercase())
            .unwrap_or_default();
        if !session.authed && !matches!(cmd.as_str(), "AUTH" | "HELLO" | "QUIT") {
            return (Reply::err(auth::NOAUTH), Control::Continue);
        }
        let tx = &mut session.tx;
        if self.access.is_disabled(&cmd) {
            if let Some(t) = tx.as_mut() {
                t.dirty = true;
            }
            return (
                Reply::err(format!(
                    "ERR '{}' is disabled on this server (--disable-command)",
                    cmd.to_lowercase()
                )),
                Control::Continue,
            );
        }
        let control_of = |c: &str| matches!(c, "MULTI" | "EXEC" | "DISCARD");
        if control_of(&cmd) && args.len() != 1 {
            if let Some(t) = tx.as_mut() {
                t.dirty = true;
            }
            return (arity(&cmd.to_lowercase()), Control::Continue);
        }
        let reply = match (tx.as_mut(), cmd.as_str()) {
            (_, "QUIT") => return (Reply::ok(), Control::Close),
            (None, "WATCH") => Reply::err("ERR WATCH is not supported by this server"),
            (None, "UNWATCH") => Reply::ok(),
            (None, "HELLO") => {
                let _shared = self.exclusive.read();
                self.hello(&args[1..], session)
            }
            (None, "AUTH") => self.auth(&args[1..], &mut session.authed),
            (None, "MULTI") => {
                *tx = Some(Transaction::default());
                Reply::ok()
            }
            (None, "EXEC") => Reply::err("ERR EXEC without MULTI"),
            (None, "DISCARD") => Reply::err("ERR DISCARD without MULTI"),
            (None, _) => return self.execute(args),
            (Some(t), "MULTI") => {
                t.dirty = true;
                Reply::err("ERR MULTI calls can not be nested")
            }
            (Some(t), "SHUTDOWN" | "HELLO" | "AUTH" | "WATCH") => {
                t.dirty = true;
                Reply::err("ERR Command not allowed inside a transaction")
            }
            (Some(_), "DISCARD") => {
                *tx = None;
                Reply::ok()
            }
            (Some(_), "EXEC") => match tx.take() {
                Some(t) if t.dirty => {
                    Reply::err("EXECABORT Transaction discarded because of previous errors.")
                }
                Some(t) => self.exec(&t.queued),
                None => Reply::err("ERR EXEC without MULTI"),
            },
            (Some(t), _) => match Self::queueable(&cmd, args.len() as i64) {
                Ok(()) => {
                    t.queued.push(args.to_vec());
                    Reply::Simple("QUEUED".into())
                }
                Err(e) => {
                    t.dirty = true;
                    e
                }
            },
        };
        (reply, Control::Continue)
    }

    /// Runs point reads (see [`Db::is_point_read`]) if no transaction is running or waiting to run; None
    /// otherwise, so that the event loop never waits for one (the caller sends them to the blocking pool).
    pub fn try_point_reads(&self, requests: &[Vec<Vec<u8>>]) -> Option<Vec<Reply>> {
        let _shared = self.exclusive.try_read()?;
        Some(requests.iter().map(|args| self.run(args).0).collect())
    }

    /// Whether a command may be queued: known, with a valid number of arguments.
    fn queueable(cmd: &str, argc: i64) -> Result<(), Reply> {
        match COMMANDS.iter().find(|(name, _)| *name == cmd) {
            None => Err(Reply::err(format!("ERR unknown command '{cmd}'"))),
            // Redis arity: n exactly, or -n for at least n (the command's name counted)
            Some((_, n)) if (*n >= 0 && argc != *n) || (*n < 0 && argc < -*n) => {
                Err(arity(&cmd.to_lowercase()))
            }
            Some(_) => Ok(()),
        }
    }

    /// Runs a transaction's commands with every other command and group commit held off.
    fn exec(&self, queued: &[Vec<Vec<u8>>]) -> Reply {
        let _only = self.exclusive.write();
        Reply::Array(Some(queued.iter().map(|args| self.run(args).0).collect()))
    }

    /// Runs one command.
    pub fn execute(&self, args: &[Vec<u8>]) -> (Reply, Control) {
        let _shared = self.exclusive.read();
        self.run(args)
    }

    fn run(&self, args: &[Vec<u8>]) -> (Reply, Control) {
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
            // answered per connection by `execute_in`, and refused inside a transaction
            "HELLO" | "AUTH" => Reply::err("ERR Command not allowed inside a transaction"),
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
                Ok(h) => Reply::Map(
                    h.into_iter()
                        .map(|(f, v)| (Reply::bulk(f), Reply::bulk(v)))
                        .collect(),
                ),
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
}

/// Whether `name` (upper case) is a command of this server.
pub fn is_command(name: &str) -> bool {
    COMMANDS.iter().any(|(c, _)| *c == name)
}

/// Commands and their Redis arity (for COMMAND).
const COMMANDS: &[(&str, i64)] = &[
    ("PING", -1),
    ("ECHO", 2),
    ("QUIT", 1),
    ("SHUTDOWN", -1),
    ("SELECT", 2),
    ("HELLO", -1),
    ("AUTH", -2),
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
    ("MULTI", 1),
    ("EXEC", 1),
    ("DISCARD", 1),
    ("UNWATCH", 1),
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

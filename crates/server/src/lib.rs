//! `cosine-server`: the engine behind the Redis protocol (RESP2, and RESP3 for a connection that sends
//! `HELLO 3`, over tokio), so that redis-cli, redis-benchmark, redis-py at its defaults and YCSB's Redis binding
//! work against a Cosine engine.
//!
//! Requests may be pipelined; each connection's malformed stream gets an error reply and only that connection
//! is closed; requests above `max_request_bytes` and connections above `max_connections` are refused with an
//! error. SIGTERM, SIGINT and SHUTDOWN stop accepting, flush the engine and close it, so nothing acknowledged is
//! lost.
#![deny(missing_docs)]
// a library reports failures as typed errors; unit tests may unwrap
#![deny(clippy::unwrap_used)]
#![cfg_attr(test, allow(clippy::unwrap_used))]

pub mod auth;
pub mod commands;
pub mod commit;
pub mod reader;
pub mod resp;
pub mod store;

use auth::Access;
use commands::{is_transaction_command, Control, Db, Session};
use cosine_design::Design;
use cosine_engine::{Engine, Options};
use resp::Reply;
use std::net::SocketAddr;
use std::path::Path;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use thiserror::Error;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{Notify, Semaphore};

/// Why the server could not run.
#[derive(Debug, Error)]
#[non_exhaustive]
pub enum ServerError {
    /// The engine failed to open or close.
    #[error(transparent)]
    Engine(#[from] cosine_engine::Error),
    /// An access setting was refused (an empty password, an unknown command to disable).
    #[error(transparent)]
    Access(#[from] auth::AccessError),
    /// Binding or serving failed.
    #[error("{context}: {source}")]
    Io {
        /// What was being done.
        context: String,
        /// The cause.
        source: std::io::Error,
    },
}

/// Server limits and address.
#[derive(Clone, Debug)]
pub struct ServerOptions {
    /// Address to listen on.
    pub bind: String,
    /// Most simultaneous connections.
    pub max_connections: usize,
    /// Largest request (sum of its arguments) in bytes.
    pub max_request_bytes: usize,
    /// The default user's password (Redis's `requirepass`): None lets every client in.
    pub requirepass: Option<String>,
    /// Commands refused to every client (e.g. FLUSHALL, FLUSHDB, SHUTDOWN, CONFIG, DEBUG).
    pub disabled_commands: Vec<String>,
    /// Protected mode: without a password, clients not on loopback are turned away.
    pub protected_mode: bool,
    /// How long a client may take to read a reply before its connection is closed: a client that stops
    /// reading would otherwise hold its slot, and its unsent replies, for ever.
    pub write_timeout: std::time::Duration,
    /// How long a client may stay idle (no request) before its connection is closed; None: for ever (Redis's
    /// `timeout 0`).
    pub idle_timeout: Option<std::time::Duration>,
    /// Threads running the connections' event loops (0: one per core). A point read answered on its
    /// connection's loop may wait on the disk: it holds that thread, and the other loops serve the other
    /// connections meanwhile.
    pub event_loops: usize,
}

impl Default for ServerOptions {
    fn default() -> Self {
        ServerOptions {
            bind: "127.0.0.1:6380".into(),
            max_connections: 1024,
            max_request_bytes: 512 << 20,
            requirepass: None,
            disabled_commands: Vec::new(),
            protected_mode: true,
            write_timeout: std::time::Duration::from_secs(60),
            idle_timeout: None,
            event_loops: 0,
        }
    }
}

/// Opens the engine in `dir` and serves it until SHUTDOWN or a signal. `ready` is called with the bound address.
pub fn run(
    dir: &Path,
    design: &Design,
    engine_opts: Options,
    opts: ServerOptions,
    ready: impl FnOnce(SocketAddr),
) -> Result<(), ServerError> {
    let access = Access::new(
        opts.requirepass.as_deref(),
        &opts.disabled_commands,
        opts.protected_mode,
        commands::is_command,
    )?;
    let engine = Arc::new(Engine::open_with(dir, design, engine_opts)?);
    let loops = match opts.event_loops {
        0 => std::thread::available_parallelism().map_or(2, |n| n.get()),
        n => n,
    };
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(loops)
        .enable_all()
        .build()
        .map_err(|source| ServerError::Io {
            context: "starting the runtime".into(),
            source,
        })?;
    let db = Arc::new(Db::with_access(engine.clone(), design.clone(), access));
    let served = rt.block_on(serve(db.clone(), opts, ready));
    db.committer.stop();
    drop(rt);
    drop(db);
    served?;
    engine.flush()?;
    match Arc::try_unwrap(engine) {
        Ok(e) => e.close()?,
        Err(e) => drop(e),
    }
    Ok(())
}

/// Serves `db` until SHUTDOWN or SIGTERM/SIGINT: `opts` gives the address and limits; who may run what is the
/// db's [`Access`] (see [`Db::with_access`]; [`run`] builds it from `opts`).
pub async fn serve(
    db: Arc<Db>,
    opts: ServerOptions,
    ready: impl FnOnce(SocketAddr),
) -> Result<(), ServerError> {
    let listener = TcpListener::bind(&opts.bind)
        .await
        .map_err(|source| ServerError::Io {
            context: format!("binding {}", opts.bind),
            source,
        })?;
    let addr = listener.local_addr().map_err(|source| ServerError::Io {
        context: "local address".into(),
        source,
    })?;
    ready(addr);
    tokio::spawn(db.committer.run(db.engine.clone(), db.exclusive.clone()));
    let stop = Arc::new(Notify::new());
    let slots = Arc::new(Semaphore::new(opts.max_connections));
    let mut sigterm = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate())
        .map_err(|source| ServerError::Io {
            context: "installing the SIGTERM handler".into(),
            source,
        })?;
    loop {
        tokio::select! {
            accepted = listener.accept() => {
                let Ok((socket, peer)) = accepted else { continue };
                db.connections.fetch_add(1, Ordering::Relaxed);
                let _ = socket.set_nodelay(true);
                if db.access.turns_away(&peer) {
                    tokio::spawn(refuse(socket, auth::DENIED));
                    continue;
                }
                match slots.clone().try_acquire_owned() {
                    Ok(permit) => {
                        let (db, stop) = (db.clone(), stop.clone());
                        let limits = Limits {
                            max_request_bytes: opts.max_request_bytes,
                            write_timeout: opts.write_timeout,
                            idle_timeout: opts.idle_timeout,
                        };
                        tokio::spawn(async move {
                            connection(socket, db, stop, limits).await;
                            drop(permit);
                        });
                    }
                    Err(_) => {
                        tokio::spawn(refuse(socket, "ERR max number of clients reached"));
                    }
                }
            }
            _ = stop.notified() => break,
            _ = sigterm.recv() => break,
            _ = tokio::signal::ctrl_c() => break,
        }
    }
    Ok(())
}

/// Requests of one connection executed and answered together at most: what bounds the replies it holds in
/// memory at once (a pipeline of GETs of large values would otherwise build them all before writing one).
const MAX_BATCH: usize = 256;

/// How long a connection may wait before it authenticates, where a password is set.
const AUTH_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(10);

/// Whether a request may authenticate its connection (AUTH, or HELLO with AUTH).
fn is_auth(args: &[Vec<u8>]) -> bool {
    args.first()
        .is_some_and(|c| c.eq_ignore_ascii_case(b"AUTH") || c.eq_ignore_ascii_case(b"HELLO"))
}

/// Answers one error and closes the connection.
async fn refuse(mut socket: TcpStream, why: &'static str) {
    let mut out = Vec::new();
    Reply::err(why).encode(&mut out);
    let _ = tokio::time::timeout(std::time::Duration::from_secs(1), socket.write_all(&out)).await;
    let _ = socket.shutdown().await;
}

/// What one connection may take: [`ServerOptions`]' limits.
#[derive(Clone, Copy, Debug)]
struct Limits {
    max_request_bytes: usize,
    write_timeout: std::time::Duration,
    idle_timeout: Option<std::time::Duration>,
}

async fn connection(mut socket: TcpStream, db: Arc<Db>, stop: Arc<Notify>, limits: Limits) {
    let mut session = Session::new(&db.access);
    let mut reader = reader::RequestReader::new(limits.max_request_bytes);
    let mut chunk = vec![0u8; 64 * 1024];
    // requests already received wait behind an AUTH: read them before the socket again
    let mut pending = false;
    loop {
        if !pending {
            let read = if session.authed {
                match limits.idle_timeout {
                    None => socket.read(&mut chunk).await,
                    // an idle client's slot comes back after the timeout, as under Redis's `timeout`
                    Some(idle) => match tokio::time::timeout(idle, socket.read(&mut chunk)).await {
                        Ok(r) => r,
                        Err(_) => return,
                    },
                }
            } else {
                // a connection that has not authenticated holds a slot for a while only
                match tokio::time::timeout(AUTH_TIMEOUT, socket.read(&mut chunk)).await {
                    Ok(r) => r,
                    Err(_) => {
                        let mut out = Vec::new();
                        Reply::err("ERR no AUTH within 10 s: closing").encode(&mut out);
                        let _ = tokio::time::timeout(AUTH_TIMEOUT, socket.write_all(&out)).await;
                        return;
                    }
                }
            };
            let n = match read {
                Ok(0) | Err(_) => return, // the client went away, possibly mid-request
                Ok(n) => n,
            };
            reader.extend(&chunk[..n]);
        }
        pending = false;
        let mut out = Vec::new();
        let mut control = Control::Continue;
        let mut protocol_error = None;
        let mut requests = Vec::new();
        loop {
            match reader.next(session.authed) {
                Ok(Some(args)) => {
                    if !args.is_empty() {
                        requests.push(args);
                    }
                    // a long pipeline is answered a batch at a time: its replies are built in memory before
                    // they are written, so a batch bounds them (the rest waits in the reader)
                    if requests.len() >= MAX_BATCH {
                        pending = true;
                        break;
                    }
                    // an AUTH lifts the limits on what follows it: the rest waits for its reply
                    if !session.authed && requests.last().is_some_and(|a| is_auth(a)) {
                        pending = true;
                        break;
                    }
                }
                Ok(None) => break,
                Err(e) => {
                    protocol_error = Some(e);
                    break;
                }
            }
        }
        // a transaction (open, or opened in this batch), a connection yet to authenticate and a command switched
        // off keep every request on the ordered path
        let ordered = session.tx.is_some()
            || !session.authed
            || requests.iter().any(|a| is_transaction_command(a))
            || !db.all_enabled(&requests);
        let sets: Option<Vec<(Vec<u8>, Vec<u8>)>> = if requests.is_empty() || ordered {
            None
        } else {
            requests.iter().map(|a| Db::plain_set(a)).collect()
        };
        if let Some(pairs) = sets {
            // plain SETs join the cross-connection group commit
            let n = pairs.len();
            db.commands.fetch_add(n as u64, Ordering::Relaxed);
            let reply = match db.committer.write(pairs).await {
                Ok(()) => Reply::ok(),
                Err(e) => Reply::err(format!("ERR engine: {e}")),
            };
            for _ in 0..n {
                reply.encode(&mut out);
            }
        } else if !requests.is_empty() && !ordered && requests.iter().all(|a| Db::is_point_read(a))
        {
            // point reads cost a few block reads at most: answered on the connection's event loop, without a
            // hop to the blocking pool; one that waits on the disk holds that loop's thread, not the others
            match db.try_point_reads(&requests) {
                Some(replies) => {
                    for r in replies {
                        r.encode_as(session.proto, &mut out);
                    }
                }
                // a transaction runs or waits: the event loop must not wait with it
                None => {
                    let db2 = db.clone();
                    let Ok(replies) = tokio::task::spawn_blocking(move || {
                        requests
                            .iter()
                            .map(|a| db2.execute(a).0)
                            .collect::<Vec<_>>()
                    })
                    .await
                    else {
                        return;
                    };
                    for r in replies {
                        r.encode_as(session.proto, &mut out);
                    }
                }
            }
        } else if !requests.is_empty() {
            let db2 = db.clone();
            // other engine calls may block longer (scans, log fsyncs): run them on the blocking pool, so that
            // many connections can wait on one group-commit fsync at once
            let mut s = std::mem::replace(&mut session, Session::new(&db.access));
            let done = tokio::task::spawn_blocking(move || {
                let mut replies = Vec::new();
                let mut control = Control::Continue;
                for args in &requests {
                    let (r, c) = db2.execute_in(&mut s, args);
                    // HELLO's own reply is in the protocol it switched to
                    replies.push((r, s.proto));
                    if matches!(c, Control::Close | Control::Shutdown) {
                        control = c;
                        break;
                    }
                }
                (replies, control, s)
            })
            .await;
            let Ok((replies, c, s)) = done else {
                return;
            };
            session = s;
            for (r, p) in &replies {
                r.encode_as(*p, &mut out);
            }
            control = c;
        }
        if let Some(e) = &protocol_error {
            Reply::err(format!("ERR {e}")).encode_as(session.proto, &mut out);
        }
        // a client that does not take its replies within the timeout loses its connection (and the replies)
        match tokio::time::timeout(limits.write_timeout, socket.write_all(&out)).await {
            Ok(Ok(())) => {}
            Ok(Err(_)) | Err(_) => return,
        }
        if protocol_error.is_some() || control == Control::Close {
            let _ = socket.shutdown().await;
            // drain what the client still sends for a moment, so that closing does not reset the connection
            // before the client has read the error
            let deadline = tokio::time::Instant::now() + std::time::Duration::from_millis(200);
            while let Ok(Ok(n)) = tokio::time::timeout_at(deadline, socket.read(&mut chunk)).await {
                if n == 0 {
                    break;
                }
            }
            return;
        }
        if control == Control::Shutdown {
            let _ = socket.shutdown().await;
            stop.notify_one();
            return;
        }
    }
}

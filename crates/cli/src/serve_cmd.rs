//! `cosine serve`: the engine behind the Redis protocol.

use anyhow::{bail, Context, Result};
use clap::{Parser, ValueEnum};
use cosine_design::load_design;
use cosine_engine::{Options, SyncMode, WalRecovery};
use cosine_server::ServerOptions;
use std::io::Write;

/// When the engine's log is fsynced.
#[derive(Clone, Copy, Debug, ValueEnum, PartialEq, Eq)]
pub enum Sync {
    /// fsync before every write returns.
    Always,
    /// Group commit: a write returns once an fsync covers it.
    Batch,
    /// Leave it to the OS.
    Never,
}

/// How the opening treats a damaged log (RocksDB's WAL recovery modes).
#[derive(Clone, Copy, Debug, ValueEnum, PartialEq, Eq)]
pub enum Recovery {
    /// End the log at its first damage unless a later sync mark proves it durable (then: corruption).
    PointInTime,
    /// Accept only a torn tail; any other damage is corruption.
    Tail,
    /// Accept no damage at all, not even a torn tail.
    Absolute,
}

/// Arguments of `cosine serve`.
#[derive(Parser, Debug)]
pub struct ServeArgs {
    /// design.json (e.g. from `cosine search --design-out`).
    #[arg(long)]
    design: String,
    /// Data directory (created if missing).
    #[arg(long)]
    data: String,
    /// Address to listen on.
    #[arg(long, default_value = "127.0.0.1:6380")]
    bind: String,
    /// When the log is fsynced.
    #[arg(long, value_enum, default_value_t = Sync::Batch)]
    sync: Sync,
    /// How a restart treats a damaged log.
    #[arg(long, value_enum, default_value_t = Recovery::PointInTime)]
    wal_recovery: Recovery,
    /// Most simultaneous connections.
    #[arg(long, default_value_t = 1024)]
    max_connections: usize,
    /// Largest request in bytes.
    #[arg(long, default_value_t = 512 * 1024 * 1024)]
    max_request_bytes: usize,
    /// A file whose first line is the password clients must give (AUTH, or HELLO's AUTH) before any other
    /// command; the file keeps it out of `ps`.
    #[arg(long, conflicts_with = "requirepass")]
    requirepass_file: Option<String>,
    /// The password clients must give, on the command line (visible in `ps`: prefer --requirepass-file).
    #[arg(long)]
    requirepass: Option<String>,
    /// Commands refused to every client, comma-separated or repeated (e.g. FLUSHALL,FLUSHDB,SHUTDOWN,CONFIG,DEBUG:
    /// FLUSHDB wipes as FLUSHALL does, and SETNX, MSET and INCR write as SET does, so disable them together).
    #[arg(long, value_delimiter = ',')]
    disable_command: Vec<String>,
    /// Protected mode: without a password, clients that are not on loopback are turned away (as Redis does).
    #[arg(long, value_enum, default_value_t = YesNo::Yes)]
    protected_mode: YesNo,
    /// Seconds a client may take to read a reply before its connection is closed (a client that stops
    /// reading would hold its slot and its replies for ever).
    #[arg(long, default_value_t = 60.0)]
    client_write_timeout: f64,
    /// Seconds a client may stay idle before its connection is closed; 0: never (Redis's `timeout`).
    #[arg(long, default_value_t = 0.0)]
    timeout: f64,
    /// Threads running the connections' event loops; 0: one per core. A read that waits on the disk holds one.
    #[arg(long, default_value_t = 0)]
    event_loops: usize,
}

/// A yes-or-no setting.
#[derive(Clone, Copy, Debug, ValueEnum, PartialEq, Eq)]
pub enum YesNo {
    /// On.
    Yes,
    /// Off.
    No,
}

/// The password of `--requirepass-file` (its first line) or `--requirepass`.
fn password(a: &ServeArgs) -> Result<Option<String>> {
    let Some(path) = &a.requirepass_file else {
        return Ok(a.requirepass.clone());
    };
    Ok(Some(cosine_server::auth::password_file(path)?))
}

/// Runs the server until SHUTDOWN, SIGTERM or SIGINT.
pub fn run(a: ServeArgs) -> Result<()> {
    if a.max_connections == 0 || a.max_request_bytes == 0 {
        bail!("--max-connections and --max-request-bytes must be positive");
    }
    if !(a.client_write_timeout > 0.0 && a.client_write_timeout.is_finite()) {
        bail!(
            "--client-write-timeout must be a positive number of seconds, got {}",
            a.client_write_timeout
        );
    }
    if !(a.timeout >= 0.0 && a.timeout.is_finite()) {
        bail!(
            "--timeout must be 0 (never) or a positive number of seconds, got {}",
            a.timeout
        );
    }
    let design = load_design(&a.design).with_context(|| format!("design {}", a.design))?;
    let sync = match a.sync {
        Sync::Always => SyncMode::Always,
        Sync::Batch => SyncMode::Batch,
        Sync::Never => SyncMode::Never,
    };
    let opts = ServerOptions {
        bind: a.bind.clone(),
        max_connections: a.max_connections,
        max_request_bytes: a.max_request_bytes,
        requirepass: password(&a)?,
        disabled_commands: a.disable_command.clone(),
        protected_mode: a.protected_mode == YesNo::Yes,
        write_timeout: std::time::Duration::from_secs_f64(a.client_write_timeout),
        idle_timeout: (a.timeout > 0.0).then(|| std::time::Duration::from_secs_f64(a.timeout)),
        event_loops: a.event_loops,
    };
    if opts.requirepass.as_deref() == Some("") {
        bail!("--requirepass is empty");
    }
    let access = match (&opts.requirepass, opts.protected_mode) {
        (Some(_), _) => "a password required".to_string(),
        (None, true) => "no password: loopback clients only (protected mode)".to_string(),
        (None, false) => {
            "no password, protected mode off: every client that reaches the port".to_string()
        }
    };
    let disabled = if opts.disabled_commands.is_empty() {
        String::new()
    } else {
        format!(
            ", disabled: {}",
            opts.disabled_commands.join(" ").to_uppercase()
        )
    };
    let class = design
        .class
        .map(|c| c.to_string())
        .unwrap_or_else(|| "unrecorded".into());
    cosine_server::run(
        std::path::Path::new(&a.data),
        &design,
        Options {
            wal_recovery: match a.wal_recovery {
                Recovery::PointInTime => WalRecovery::PointInTime,
                Recovery::Tail => WalRecovery::TolerateCorruptedTailRecords,
                Recovery::Absolute => WalRecovery::AbsoluteConsistency,
            },
            ..Options::with_sync(sync)
        },
        opts,
        |addr| {
            println!(
                "cosine serving {} ({class} design, T={}) on {addr}, data in {}, sync {:?}, {access}{disabled}",
                a.design, design.size_ratio, a.data, a.sync
            );
            let _ = std::io::stdout().flush();
        },
    )
    .with_context(|| format!("serving {}", a.data))?;
    println!("cosine: engine flushed and closed");
    Ok(())
}

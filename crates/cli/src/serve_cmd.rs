//! `cosine serve`: the engine behind the Redis protocol.

use anyhow::{bail, Context, Result};
use clap::{Parser, ValueEnum};
use cosine_design::load_design;
use cosine_engine::{Options, SyncMode};
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
    /// Most simultaneous connections.
    #[arg(long, default_value_t = 1024)]
    max_connections: usize,
    /// Largest request in bytes.
    #[arg(long, default_value_t = 512 * 1024 * 1024)]
    max_request_bytes: usize,
}

/// Runs the server until SHUTDOWN, SIGTERM or SIGINT.
pub fn run(a: ServeArgs) -> Result<()> {
    if a.max_connections == 0 || a.max_request_bytes == 0 {
        bail!("--max-connections and --max-request-bytes must be positive");
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
    };
    let class = design
        .class
        .map(|c| c.to_string())
        .unwrap_or_else(|| "unrecorded".into());
    cosine_server::run(
        std::path::Path::new(&a.data),
        &design,
        Options::with_sync(sync),
        opts,
        |addr| {
            println!(
                "cosine serving {} ({class} design, T={}) on {addr}, data in {}, sync {:?}",
                a.design, design.size_ratio, a.data, a.sync
            );
            let _ = std::io::stdout().flush();
        },
    )
    .with_context(|| format!("serving {}", a.data))?;
    println!("cosine: engine flushed and closed");
    Ok(())
}

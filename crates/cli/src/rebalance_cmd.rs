//! `cosine rebalance`: moves the keys whose shard changes between two deployments' proxy configurations (see
//! `cosine_deploy::mover` for the procedure and what it guarantees).

use anyhow::{Context, Result};
use clap::{Parser, ValueEnum};
use cosine_deploy::{mover, ProxyConfig};
use std::path::Path;

/// The two passes around the proxies' switch.
#[derive(Clone, Copy, Debug, ValueEnum)]
pub enum Pass {
    /// Before the switch: copy every moving key to its new shard (the old shards keep theirs).
    Copy,
    /// After every proxy serves the new configuration: carry later writes, then delete moved keys from old shards.
    Finish,
}

/// Arguments of `cosine rebalance`.
#[derive(Parser, Debug)]
pub struct RebalanceArgs {
    /// Which pass.
    pass: Pass,
    /// The old deployment's nutcracker.yml (or its generated directory).
    #[arg(long)]
    from: String,
    /// The new deployment's nutcracker.yml (or its generated directory).
    #[arg(long)]
    to: String,
    /// Where `copy` records what it copied, for `finish`.
    #[arg(long, default_value = "moves.state")]
    state: String,
}

/// Runs `cosine rebalance`.
pub fn run(a: RebalanceArgs) -> Result<()> {
    let old = ProxyConfig::load(Path::new(&a.from))?;
    let new = ProxyConfig::load(Path::new(&a.to))?;
    let state = Path::new(&a.state);
    let report = match a.pass {
        Pass::Copy => mover::copy(&old, &new, state)?,
        Pass::Finish => mover::finish(&old, &new, state)
            .with_context(|| format!("finishing from {} (run `copy` first)", state.display()))?,
    };
    println!("{report}");
    Ok(())
}

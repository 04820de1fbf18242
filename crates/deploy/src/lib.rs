//! Deployments of the engines the search chose, as it priced them: twemproxy's (nutcracker's) ketama ring
//! reproduced, so each shard is given the weight that makes its share of the keys its share of memory; the
//! proxy configuration, per-host scripts and systemd units, a health check; and moving keys when the deployment
//! grows by a VM.
#![deny(missing_docs)]
#![deny(clippy::unwrap_used)]
#![cfg_attr(test, allow(clippy::unwrap_used))]

pub mod files;
pub mod layout;
pub mod mover;
pub mod proxy;
pub mod ring;

pub use files::{generate_deployment, probe_keys, Generated};
pub use layout::{parse_hosts, place, Host, Layout};
pub use proxy::{ProxyConfig, ProxyServer};
pub use ring::{tune_weights, KeyHash, Member, Ring, Tuned};

/// What can go wrong laying out, writing or rebalancing a deployment.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// Reading or writing a file.
    #[error(transparent)]
    Io(#[from] std::io::Error),
    /// The hosts file does not fit the deployment, or the layout is impossible.
    #[error("{0}")]
    Hosts(String),
    /// A proxy configuration that cannot be read or used.
    #[error("proxy configuration: {0}")]
    Proxy(String),
    /// A shard did not answer as expected.
    #[error("{0} at {1}: {2}")]
    Shard(String, String, String),
    /// The state file of a rebalance is damaged.
    #[error("rebalance state {0} is damaged")]
    State(String),
}

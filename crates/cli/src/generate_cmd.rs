//! `cosine generate`: a standalone engine project (or a multi-VM deployment behind twemproxy).

use anyhow::{anyhow, bail, Context, Result};
use clap::Parser;
use cosine_deploy::{generate_deployment, parse_hosts, place, Layout, ProxyConfig};
use cosine_design::{load_design, Deployment};
use cosine_engine::template::{generate, Dependency, Generate};
use std::path::{Path, PathBuf};

/// Arguments of `cosine generate`.
#[derive(Parser, Debug)]
pub struct GenerateArgs {
    /// design.json of a single engine.
    #[arg(long, conflicts_with = "deployment")]
    design: Option<String>,
    /// deployment.json of several VMs (from `cosine search --deployment-out`).
    #[arg(long)]
    deployment: Option<String>,
    /// Output directory (must be empty or absent).
    #[arg(long)]
    out: String,
    /// Crate and binary name.
    #[arg(long, default_value = "cosine-engine-gen")]
    name: String,
    /// Default listen address of a single engine.
    #[arg(long, default_value = "127.0.0.1:6380")]
    bind: String,
    /// Depend on the engine crates of this checkout (default: the one this cosine was built from).
    #[arg(long, conflicts_with = "engine_version")]
    engine_path: Option<String>,
    /// Depend on published engine crates of this version instead.
    #[arg(long)]
    engine_version: Option<String>,
    /// First shard port of a deployment rehearsed on 127.0.0.1 (without --hosts).
    #[arg(long, default_value_t = 7001)]
    base_port: u16,
    /// twemproxy's port (it listens on 127.0.0.1, beside the application).
    #[arg(long, default_value_t = 22121)]
    proxy_port: u16,
    /// The VMs' addresses: one line per VM of the deployment, in order, `host[:port] [vm-type]`.
    #[arg(long, requires = "deployment")]
    hosts: Option<String>,
    /// The engine's port on a host whose line in --hosts gives none.
    #[arg(long, default_value_t = 6380)]
    shard_port: u16,
    /// The deployment this one grows from (its generated directory, its nutcracker.yml, or its deployment.json,
    /// which is laid out as `generate` would with this --base-port): kept VMs keep their shard names and
    /// addresses, and the README shows which keys move.
    #[arg(long, requires = "deployment")]
    from: Option<String>,
    /// A file whose first line is the shards' password (default: the --from deployment's when it is a directory
    /// or nutcracker.yml, else 32 random hex digits). Every shard and the proxy require it; it is written to
    /// the deployment's `password` file.
    #[arg(long, requires = "deployment")]
    password_file: Option<String>,
}

/// The proxy configuration of an earlier deployment: a generated directory, its nutcracker.yml, or a
/// deployment.json laid out as `cosine generate` would on 127.0.0.1.
fn previous(path: &str, a: &GenerateArgs) -> Result<ProxyConfig> {
    if !path.ends_with(".json") {
        return Ok(ProxyConfig::load(Path::new(path))?);
    }
    let text = std::fs::read_to_string(path).with_context(|| format!("cannot read {path}"))?;
    let d = Deployment::from_json(&text).with_context(|| format!("deployment {path}"))?;
    let l = Layout {
        hosts: None,
        shard_port: a.shard_port,
        base_port: a.base_port,
        proxy_port: a.proxy_port,
        previous: None,
        password: None,
    };
    // a deployment.json does not hold the password its shards run with (--password-file gives it)
    let mut c = place(&d, &l)?.0;
    c.redis_auth = None;
    Ok(c)
}

fn checkout() -> Option<PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    root.join("engine-template/Cargo.toml")
        .exists()
        .then(|| root.canonicalize().ok())
        .flatten()
}

/// Runs `cosine generate`.
pub fn run(a: GenerateArgs) -> Result<()> {
    let dependency = match (&a.engine_path, &a.engine_version) {
        (Some(p), _) => {
            let p = Path::new(p)
                .canonicalize()
                .with_context(|| format!("engine path {p}"))?;
            if !p.join("engine-template/Cargo.toml").exists() {
                bail!(
                    "{} is not a Cosine checkout (no engine-template/Cargo.toml)",
                    p.display()
                );
            }
            Dependency::Path(p)
        }
        (None, Some(v)) => Dependency::Version(v.clone()),
        (None, None) => Dependency::Path(checkout().ok_or_else(|| {
            anyhow!("no Cosine checkout found: pass --engine-path or --engine-version")
        })?),
    };
    let out = Path::new(&a.out);
    match (&a.design, &a.deployment) {
        (Some(path), None) => {
            let design = load_design(path).with_context(|| format!("design {path}"))?;
            let g = Generate {
                name: a.name.clone(),
                dependency,
                bind: a.bind.clone(),
                data: "data".into(),
                source: path.clone(),
            };
            generate(&design, out, &g)
                .with_context(|| format!("generating into {}", out.display()))?;
            println!(
                "wrote {} ({} design) to {}: cd {} && cargo build --release && ./target/release/{}",
                a.name,
                design
                    .class
                    .map_or("unclassified".into(), |c| c.to_string()),
                out.display(),
                out.display(),
                a.name
            );
        }
        (None, Some(path)) => {
            let text =
                std::fs::read_to_string(path).with_context(|| format!("cannot read {path}"))?;
            let d = Deployment::from_json(&text).with_context(|| format!("deployment {path}"))?;
            let hosts = match &a.hosts {
                Some(h) => {
                    let text = std::fs::read_to_string(h)
                        .with_context(|| format!("cannot read hosts file {h}"))?;
                    Some(parse_hosts(&text).with_context(|| format!("hosts file {h}"))?)
                }
                None => None,
            };
            let prev = a.from.as_deref().map(|f| previous(f, &a)).transpose()?;
            if a.from.as_deref().is_some_and(|f| f.ends_with(".json")) && a.password_file.is_none()
            {
                bail!("--from a deployment.json needs --password-file: the password its shards run with (the `password` file of its directory)");
            }
            // the kept shards go on running with the previous deployment's password: the new one must be it
            let given = a
                .password_file
                .as_deref()
                .map(cosine_server::auth::password_file)
                .transpose()?;
            if let Some(p) = &prev {
                match (&p.redis_auth, &given) {
                    (None, None) => bail!("the deployment --from names has no password (its shards run without one): restart them with a password first, then pass it with --password-file"),
                    (Some(old), Some(new)) if old != new => bail!("--password-file differs from the password of the deployment --from names, which its kept shards run with"),
                    _ => {}
                }
            }
            let layout = Layout {
                hosts,
                shard_port: a.shard_port,
                base_port: a.base_port,
                proxy_port: a.proxy_port,
                previous: prev,
                password: given,
            };
            let g = Generate {
                name: a.name.clone(),
                dependency,
                bind: a.bind.clone(),
                data: "data".into(),
                source: path.clone(),
            };
            let done = generate_deployment(&d, out, &g, &layout)
                .with_context(|| format!("generating into {}", out.display()))?;
            println!(
                "wrote a {}-shard deployment on {} to {} (proxy on 127.0.0.1:{}); each shard's share of the keys within {:.1}% of its share of memory",
                d.shards.len(),
                d.provider,
                out.display(),
                a.proxy_port,
                100.0 * done.share_error
            );
            println!(
                "{:<10} {:<16} {:>9} {:>9} {:>7}  address",
                "shard", "vm", "memory", "ring", "weight"
            );
            for (i, s) in done.proxy.servers.iter().enumerate() {
                println!(
                    "{:<10} {:<16} {:>8.2}% {:>8.2}% {:>7}  {}",
                    s.name,
                    s.vm,
                    100.0 * done.targets[i],
                    100.0 * done.shares[i],
                    s.weight,
                    s.addr()
                );
            }
            if let Some((m, least)) = done.moved {
                println!(
                    "{:.1}% of the keys change shard (at least {:.1}% must): {}/README.md says how to move them (cosine rebalance)",
                    100.0 * m,
                    100.0 * least,
                    out.display()
                );
            }
            println!(
                "every shard and the proxy require the password in {}/password (redis-cli: REDISCLI_AUTH=$(cat password))",
                out.display()
            );
            if a.hosts.is_some() {
                println!(
                    "{}/README.md says how to start each host; {}/health.sh checks them",
                    out.display(),
                    out.display()
                );
            } else {
                println!(
                    "{}/start.sh rehearses it on this machine; {}/health.sh checks it",
                    out.display(),
                    out.display()
                );
            }
        }
        _ => bail!("give --design FILE or --deployment FILE"),
    }
    Ok(())
}

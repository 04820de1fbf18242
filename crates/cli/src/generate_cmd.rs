//! `cosine generate`: a standalone engine project (or a multi-VM deployment behind twemproxy).

use anyhow::{anyhow, bail, Context, Result};
use clap::Parser;
use cosine_design::{load_design, Deployment};
use cosine_engine::template::{generate, generate_deployment, Dependency, Generate};
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
    /// First shard port of a deployment.
    #[arg(long, default_value_t = 7001)]
    base_port: u16,
    /// twemproxy's port.
    #[arg(long, default_value_t = 22121)]
    proxy_port: u16,
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
            let d = Deployment::from_json(&text)?;
            let g = Generate {
                name: a.name.clone(),
                dependency,
                bind: a.bind.clone(),
                data: "data".into(),
                source: path.clone(),
            };
            generate_deployment(&d, out, &g, a.base_port, a.proxy_port)
                .with_context(|| format!("generating into {}", out.display()))?;
            println!("wrote a {}-shard deployment on {} to {}: {}/start.sh starts it (proxy on 127.0.0.1:{})", d.shards.len(), d.provider, out.display(), out.display(), a.proxy_port);
        }
        _ => bail!("give --design FILE or --deployment FILE"),
    }
    Ok(())
}

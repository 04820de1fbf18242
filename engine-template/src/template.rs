//! `cosine generate`'s templates (`engine-template/templates/`): a standalone Cargo project whose binary is one
//! engine with its design fixed at compile time, serving RESP; and, for several VMs, one project per VM type, a
//! twemproxy (nutcracker) configuration that spreads keys over the shards with consistent hashing (ketama)
//! weighted by memory, and scripts that start and stop them all.

use cosine_design::{Deployment, Design};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

const CARGO_TOML: &str = include_str!("../templates/Cargo.toml.tmpl");
const MAIN_RS: &str = include_str!("../templates/main.rs.tmpl");
const README: &str = include_str!("../templates/README.md.tmpl");
const CONF: &str = include_str!("../templates/engine.conf.tmpl");

/// Where the generated project gets the engine crates.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Dependency {
    /// A checkout of this repository (its root directory).
    Path(PathBuf),
    /// Published crates of this version.
    Version(String),
}

/// What to generate.
#[derive(Clone, Debug)]
pub struct Generate {
    /// Crate and binary name.
    pub name: String,
    /// Engine crates.
    pub dependency: Dependency,
    /// Default listen address.
    pub bind: String,
    /// Default data directory.
    pub data: String,
    /// Where the design came from (for the docs).
    pub source: String,
}

/// The design as a Rust constant expression.
pub fn design_const(d: &Design) -> String {
    let mut s = String::from("Design {\n");
    let _ = writeln!(s, "    size_ratio: {},", d.size_ratio);
    let _ = writeln!(s, "    hot_runs: {},", d.hot_runs);
    let _ = writeln!(s, "    cold_runs: {},", d.cold_runs);
    let _ = writeln!(s, "    block_bytes: {},", d.block_bytes);
    let _ = writeln!(s, "    buffer_bytes: {},", d.buffer_bytes);
    let _ = writeln!(s, "    filter_bytes: {},", d.filter_bytes);
    let _ = writeln!(s, "    fence_bytes: {},", d.fence_bytes);
    let _ = writeln!(
        s,
        "    filter_granularity: FilterGranularity::{:?},",
        d.filter_granularity
    );
    let _ = writeln!(s, "    compaction: Compaction::{:?},", d.compaction);
    let _ = writeln!(s, "    run_strategy: RunStrategy::{:?},", d.run_strategy);
    let _ = writeln!(s, "    file_picking: FilePicking::{:?},", d.file_picking);
    let _ = writeln!(s, "    merge_threshold: {:?},", d.merge_threshold);
    let _ = writeln!(
        s,
        "    full_compaction_levels: {},",
        d.full_compaction_levels
    );
    let _ = writeln!(s, "    threads: {},", d.threads);
    let _ = writeln!(s, "    file_bytes: {},", d.file_bytes);
    let _ = writeln!(s, "    log: LogKind::{:?},", d.log);
    let _ = writeln!(
        s,
        "    class: {},",
        d.class
            .map_or("None".to_string(), |c| format!("Some(DesignClass::{c:?})"))
    );
    s.push('}');
    s
}

fn dependencies(dep: &Dependency) -> String {
    match dep {
        Dependency::Path(root) => ["design", "engine", "server"]
            .iter()
            .map(|c| {
                let dir = match *c {
                    "design" => root.join("crates/design"),
                    "engine" => root.join("engine-template"),
                    _ => root.join("crates/server"),
                };
                format!("cosine-{c} = {{ path = \"{}\" }}", dir.display())
            })
            .collect::<Vec<_>>()
            .join("\n"),
        Dependency::Version(v) => ["design", "engine", "server"]
            .iter()
            .map(|c| format!("cosine-{c} = \"{v}\""))
            .collect::<Vec<_>>()
            .join("\n"),
    }
}

fn fill(template: &str, pairs: &[(&str, String)]) -> String {
    let mut s = template.to_string();
    for (k, v) in pairs {
        s = s.replace(&format!("{{{{{k}}}}}"), v);
    }
    s
}

fn valid_name(name: &str) -> bool {
    !name.is_empty()
        && name
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-' || c == '_')
        && name.chars().next().is_some_and(|c| c.is_ascii_lowercase())
}

/// Writes one engine project for `design` into `out` (created; must be empty or absent).
pub fn generate(design: &Design, out: &Path, g: &Generate) -> std::io::Result<()> {
    let bad = |m: String| std::io::Error::new(std::io::ErrorKind::InvalidInput, m);
    if !valid_name(&g.name) {
        return Err(bad(format!(
            "name '{}' must be lower-case letters, digits, '-' or '_', starting with a letter",
            g.name
        )));
    }
    design.validate().map_err(|e| bad(e.to_string()))?;
    if out.exists() && std::fs::read_dir(out)?.next().is_some() {
        return Err(bad(format!("{} exists and is not empty", out.display())));
    }
    std::fs::create_dir_all(out.join("src"))?;
    let class = design
        .class
        .map_or("unclassified".to_string(), |c| c.to_string());
    let port = g.bind.rsplit(':').next().unwrap_or("6380").to_string();
    let pairs = [
        ("NAME", g.name.clone()),
        ("SOURCE", g.source.clone()),
        ("CLASS", class),
        ("BIND", g.bind.clone()),
        ("DATA", g.data.clone()),
        ("PORT", port),
        ("T", design.size_ratio.to_string()),
        ("K", design.hot_runs.to_string()),
        ("Z", design.cold_runs.to_string()),
        ("BLOCK", design.block_bytes.to_string()),
        ("MB", design.buffer_bytes.to_string()),
        ("MBF", design.filter_bytes.to_string()),
        ("MFP", design.fence_bytes.to_string()),
        ("DESIGN_CONST", design_const(design)),
        ("DEPENDENCIES", dependencies(&g.dependency)),
    ];
    std::fs::write(out.join("Cargo.toml"), fill(CARGO_TOML, &pairs))?;
    std::fs::write(out.join("src/main.rs"), fill(MAIN_RS, &pairs))?;
    std::fs::write(out.join("README.md"), fill(README, &pairs))?;
    std::fs::write(out.join(format!("{}.conf", g.name)), fill(CONF, &pairs))?;
    std::fs::write(out.join("design.json"), design.to_json() + "\n")?;
    Ok(())
}

/// twemproxy weights: each shard's memory in GiB, at least 1.
pub fn weights(d: &Deployment) -> Vec<u64> {
    d.shards
        .iter()
        .map(|s| ((s.memory_bytes as f64 / (1u64 << 30) as f64).round() as u64).max(1))
        .collect()
}

/// Writes a deployment: `engines/<name>-<k>/` (one project per distinct design), `nutcracker.yml`, `start.sh`,
/// `stop.sh` and a README. Shard i listens on `base_port + i`; the proxy on `proxy_port`.
pub fn generate_deployment(
    d: &Deployment,
    out: &Path,
    g: &Generate,
    base_port: u16,
    proxy_port: u16,
) -> std::io::Result<()> {
    let bad = |m: String| std::io::Error::new(std::io::ErrorKind::InvalidInput, m);
    if d.shards.is_empty() {
        return Err(bad("a deployment needs at least one shard".into()));
    }
    if out.exists() && std::fs::read_dir(out)?.next().is_some() {
        return Err(bad(format!("{} exists and is not empty", out.display())));
    }
    std::fs::create_dir_all(out)?;
    // one engine project per distinct design
    let mut designs: Vec<&Design> = Vec::new();
    let mut engine_of = Vec::new();
    for s in &d.shards {
        let i = match designs.iter().position(|x| **x == s.design) {
            Some(i) => i,
            None => {
                designs.push(&s.design);
                designs.len() - 1
            }
        };
        engine_of.push(i);
    }
    for (k, design) in designs.iter().enumerate() {
        let name = format!("{}-{k}", g.name);
        let sub = Generate {
            name: name.clone(),
            data: format!("data/{name}"),
            ..g.clone()
        };
        generate(design, &out.join("engines").join(&name), &sub)?;
    }
    let w = weights(d);
    let mut yml = String::from("# twemproxy (nutcracker): consistent hashing over the Cosine shards, weighted by VM memory\n");
    let _ = writeln!(yml, "cosine:\n  listen: 127.0.0.1:{proxy_port}\n  hash: fnv1a_64\n  distribution: ketama\n  redis: true\n  auto_eject_hosts: false\n  preconnect: true\n  timeout: 5000\n  servers:");
    for (i, s) in d.shards.iter().enumerate() {
        let _ = writeln!(
            yml,
            "   - 127.0.0.1:{}:{} shard-{i}  # {}",
            base_port as usize + i,
            w[i],
            s.vm
        );
    }
    std::fs::write(out.join("nutcracker.yml"), yml)?;
    let mut start = String::from("#!/usr/bin/env bash\n# Builds the engines, starts one per shard, then twemproxy in front of them.\nset -euo pipefail\ncd \"$(dirname \"$0\")\"\nmkdir -p run data\nexport CARGO_TARGET_DIR=\"${CARGO_TARGET_DIR:-$PWD/target}\"\n");
    for k in 0..designs.len() {
        let _ = writeln!(
            start,
            "cargo build --release -q --manifest-path engines/{}-{k}/Cargo.toml",
            g.name
        );
    }
    for (i, s) in d.shards.iter().enumerate() {
        let name = format!("{}-{}", g.name, engine_of[i]);
        let _ = writeln!(
            start,
            "\"$CARGO_TARGET_DIR/release/{name}\" --bind 127.0.0.1:{} --data data/shard-{i} > run/shard-{i}.log 2>&1 &\necho $! > run/shard-{i}.pid   # {}",
            base_port as usize + i,
            s.vm
        );
    }
    let _ = writeln!(start, "for port in {}; do\n  for _ in $(seq 1 100); do (echo > /dev/tcp/127.0.0.1/$port) 2>/dev/null && break; sleep 0.1; done\ndone", (0..d.shards.len()).map(|i| (base_port as usize + i).to_string()).collect::<Vec<_>>().join(" "));
    let _ = writeln!(start, "nutcracker -c nutcracker.yml > run/nutcracker.log 2>&1 &\necho $! > run/nutcracker.pid\necho \"proxy on 127.0.0.1:{proxy_port}, {} shards\"", d.shards.len());
    std::fs::write(out.join("start.sh"), start)?;
    let stop = "#!/usr/bin/env bash\n# Stops the proxy, then each shard (SIGTERM: the engines flush and close).\ncd \"$(dirname \"$0\")\"\nfor f in run/nutcracker.pid run/shard-*.pid; do\n  [ -f \"$f\" ] && kill -TERM \"$(cat \"$f\")\" 2>/dev/null; rm -f \"$f\"\ndone\n";
    std::fs::write(out.join("stop.sh"), stop)?;
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        for f in ["start.sh", "stop.sh"] {
            std::fs::set_permissions(out.join(f), std::fs::Permissions::from_mode(0o755))?;
        }
    }
    let mut readme = format!("# {} deployment on {}\n\n{} shards behind twemproxy (`nutcracker.yml`, ketama, weights by memory):\n\n", g.name, d.provider, d.shards.len());
    for (i, s) in d.shards.iter().enumerate() {
        let _ = writeln!(
            readme,
            "- shard-{i}: {} ({} GiB, weight {}), engine `engines/{}-{}`, port {}",
            s.vm,
            s.memory_bytes >> 30,
            w[i],
            g.name,
            engine_of[i],
            base_port as usize + i
        );
    }
    let _ = writeln!(readme, "\n`./start.sh` builds the engines and starts everything (needs `nutcracker`, Debian package `nutcracker`); clients connect to 127.0.0.1:{proxy_port}; `./stop.sh` stops it.");
    std::fs::write(out.join("README.md"), readme)?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_constant_is_the_design() {
        let d = Design::rocksdb_like(1 << 20, 2 << 20, 3 << 20);
        let c = design_const(&d);
        assert!(
            c.contains("size_ratio: 10,")
                && c.contains("class: Some(DesignClass::Lsm),")
                && c.contains("merge_threshold: 1.0,")
        );
    }

    #[test]
    fn refuses_bad_names_and_non_empty_dirs() {
        let dir = tempfile::tempdir().unwrap();
        let g = Generate {
            name: "Bad Name".into(),
            dependency: Dependency::Version("0.1.0".into()),
            bind: "127.0.0.1:6380".into(),
            data: "data".into(),
            source: "x".into(),
        };
        assert!(generate(
            &Design::rocksdb_like(1 << 20, 0, 0),
            &dir.path().join("p"),
            &g
        )
        .is_err());
        std::fs::write(dir.path().join("file"), "x").unwrap();
        let g = Generate {
            name: "ok".into(),
            ..g
        };
        assert!(generate(&Design::rocksdb_like(1 << 20, 1, 0), dir.path(), &g).is_err());
    }
}

//! `cosine generate`'s templates (`engine-template/templates/`): a standalone Cargo project whose binary is one
//! engine with its design fixed at compile time, serving RESP. (Deployments of several VMs, one such project
//! per distinct design behind twemproxy, are `cosine-deploy`'s.)

use cosine_design::Design;
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
    let _ = writeln!(s, "    cache_bytes: {},", d.cache_bytes);
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
    let _ = writeln!(s, "    mutable_fraction: {:?},", d.mutable_fraction);
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
        ("MBC", design.cache_bytes.to_string()),
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

//! `cosine export`: a design in another engine's terms (`cosine export rocksdb`: a RocksDB OPTIONS file).

use anyhow::{Context, Result};
use clap::{Parser, Subcommand};

#[derive(Subcommand, Debug)]
pub(crate) enum ExportCommand {
    /// A RocksDB 7.x OPTIONS file for an LSM-class design (leveled or, approximately, universal compaction;
    /// B-tree-like, LSH and hybrid designs are refused).
    Rocksdb(ExportRocksdbArgs),
}

#[derive(Parser, Debug)]
pub(crate) struct ExportRocksdbArgs {
    /// The design.json file.
    #[arg(long)]
    design: String,
    /// Entries the database will hold (the Bloom filters' bits per key are M_BF over them).
    #[arg(long)]
    entries: u64,
    /// Bytes of one entry, key and value (sets how many levels RocksDB keeps room for).
    #[arg(long, default_value_t = 1024)]
    entry_bytes: u64,
    /// Bytes of one key (sets the index a design's M_FP must hold).
    #[arg(long, default_value_t = 16)]
    key_bytes: u64,
    /// Where to write the OPTIONS file ("-": standard output).
    #[arg(long, default_value = "-")]
    out: String,
}

/// Runs `cosine export ...`.
pub(crate) fn run(c: ExportCommand) -> Result<()> {
    match c {
        ExportCommand::Rocksdb(a) => export_rocksdb(a),
    }
}

fn export_rocksdb(a: ExportRocksdbArgs) -> Result<()> {
    let design = cosine_design::load_design(&a.design)?;
    let o = cosine_design::rocksdb::RocksDbOptions::for_design(
        &design,
        a.entries,
        a.entry_bytes,
        a.key_bytes,
    )
    .map_err(|e| anyhow::anyhow!("{}: {e}", a.design))?;
    let text = o.options_file();
    if a.out == "-" {
        print!("{text}");
    } else {
        std::fs::write(&a.out, text).with_context(|| format!("writing {}", a.out))?;
    }
    for n in &o.notes {
        eprintln!("approximate: {n}");
    }
    Ok(())
}

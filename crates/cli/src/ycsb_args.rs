//! What the commands that run YCSB on the engine share (`cosine bench`, `cosine validate`, `cosine learn`): the
//! log's `--sync` mode, and a YCSB core workload from its name or a property file.

use anyhow::{anyhow, bail, Context, Result};
use clap::ValueEnum;
use cosine_engine::SyncMode;
use cosine_ycsb::{parse_properties, CoreWorkload};

/// The log's sync mode, as `--sync` spells it (`cosine bench` and `cosine validate`).
#[derive(Clone, Copy, Debug, ValueEnum, PartialEq, Eq)]
pub(crate) enum SyncArg {
    /// fsync before every write returns.
    Always,
    /// Group commit: concurrent writers share an fsync.
    Batch,
    /// No fsync on writes.
    Never,
}

impl From<SyncArg> for SyncMode {
    fn from(a: SyncArg) -> Self {
        match a {
            SyncArg::Always => SyncMode::Always,
            SyncArg::Batch => SyncMode::Batch,
            SyncArg::Never => SyncMode::Never,
        }
    }
}

/// A YCSB core workload: the named one (`ycsb-a` … `ycsb-f`), or the one a YCSB property file at `file`
/// describes, with `records` records and `ops` operations, validated.
pub(crate) fn load_workload(
    name: &str,
    file: Option<&str>,
    records: u64,
    ops: u64,
) -> Result<CoreWorkload> {
    let mut w = match file {
        Some(path) => {
            let text =
                std::fs::read_to_string(path).with_context(|| format!("cannot read {path}"))?;
            let mut w = CoreWorkload::defaults(path);
            w.apply(&parse_properties(&text)?)?;
            w
        }
        None => CoreWorkload::named(name).ok_or_else(|| {
            anyhow!("unknown YCSB workload '{name}' (ycsb-a … ycsb-f, or --workload-file)")
        })?,
    };
    if records == 0 || ops == 0 {
        bail!("--records and --ops must be positive");
    }
    w.record_count = records;
    w.operation_count = ops;
    w.validate()?;
    Ok(w)
}

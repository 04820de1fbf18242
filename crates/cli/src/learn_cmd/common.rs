//! What the `learn` subcommands share: the engine measured and its measurer, what configurations are scored
//! by, the workload lists, and the scale of a repository's runs.

use anyhow::{bail, Context, Result};
use clap::ValueEnum;
use cosine_learn::collect::{CosineMeasurer, Measurer};
use cosine_learn::workloads;

/// What `cosine learn tune` scores configurations by.
#[derive(Clone, Copy, Debug, ValueEnum, PartialEq, Eq)]
pub enum ObjectiveArg {
    /// RTune's: time, rate, write and space amplification against the defaults.
    Rtune,
    /// Device I/Os per operation against the defaults' (repeatable where times are noisy).
    Ios,
}

/// How the genetic search scores the surrogate's predicted ratios to the defaults.
#[derive(Clone, Copy, Debug, ValueEnum, PartialEq, Eq)]
pub enum FitnessArg {
    /// RTune's Eq. 2: the mean of the time, rate, write- and space-amplification ratios.
    Mean,
    /// Eq. 4: their geometric mean, what measured configurations are scored by.
    Geometric,
}

impl ObjectiveArg {
    /// The objective of `cosine_learn::tune`.
    pub(super) fn get(self) -> cosine_learn::tune::Objective {
        match self {
            ObjectiveArg::Rtune => cosine_learn::tune::Objective::Rtune,
            ObjectiveArg::Ios => cosine_learn::tune::Objective::Ios,
        }
    }
}

impl FitnessArg {
    /// The fitness of `cosine_learn::tune`.
    pub(super) fn get(self) -> cosine_learn::tune::Fitness {
        match self {
            FitnessArg::Mean => cosine_learn::tune::Fitness::Mean,
            FitnessArg::Geometric => cosine_learn::tune::Fitness::Geometric,
        }
    }
}

/// How the target is matched to the repository's workloads.
#[derive(Clone, Copy, Debug, ValueEnum, PartialEq, Eq)]
pub enum MatchingArg {
    /// RTune's combined workload: every basic workload weighted by its distance.
    Combined,
    /// The nearest basic workload alone.
    Nearest,
}

/// The engine a repository measures.
#[derive(Clone, Copy, Debug, ValueEnum, PartialEq, Eq)]
pub enum EngineArg {
    /// Cosine's engine: the design primitives and algorithmic choices are the knobs.
    Cosine,
    /// RocksDB 7.8 (Debian's librocksdb-dev) with RTune's knobs, in a `cosine` built with `--features rocksdb`.
    Rocksdb,
}

impl EngineArg {
    /// The engine's name in a repository's runs.
    pub(super) fn name(self) -> &'static str {
        match self {
            EngineArg::Cosine => "cosine",
            EngineArg::Rocksdb => "rocksdb",
        }
    }
}

/// The measurer of an engine, its runs' data under `work`.
pub(super) fn measurer(
    engine: EngineArg,
    work: Option<String>,
    threads: usize,
) -> Result<Box<dyn Measurer>> {
    let work = work
        .map(std::path::PathBuf::from)
        .unwrap_or_else(std::env::temp_dir);
    std::fs::create_dir_all(&work).with_context(|| format!("--work {}", work.display()))?;
    match engine {
        EngineArg::Cosine => Ok(Box::new(CosineMeasurer::new(work, threads))),
        #[cfg(feature = "rocksdb")]
        EngineArg::Rocksdb => Ok(Box::new(cosine_peers::learn::RocksMeasurer::new(
            work, threads,
        ))),
        #[cfg(not(feature = "rocksdb"))]
        EngineArg::Rocksdb => bail!(
            "this cosine is built without RocksDB: build it with --features rocksdb (Debian's librocksdb-dev, ROCKSDB_LIB_DIR=/usr/lib/x86_64-linux-gnu)"
        ),
    }
}

/// The workloads a `--workloads` list names, at `records` (1 KiB-equivalent) and `ops`.
pub fn parse_workloads(
    list: &str,
    records: u64,
    ops: u64,
) -> Result<Vec<cosine_ycsb::CoreWorkload>> {
    let mut out = Vec::new();
    for name in list.split(',').map(str::trim).filter(|s| !s.is_empty()) {
        if name == "basic" {
            out.extend(workloads::basic(records, ops));
        } else if name == "targets" {
            out.extend(workloads::targets(records, ops));
        } else {
            match workloads::by_name(name, records, ops) {
                Some(w) => out.push(w),
                None => bail!(
                    "unknown workload '{name}' (basic, targets, rwNN-SIZE such as rw90-1k, upd-SIZE, or ycsb-a..ycsb-f)"
                ),
            }
        }
    }
    if out.is_empty() {
        bail!("--workloads names no workload");
    }
    Ok(out)
}

/// A repository's runs of an engine at one memory size, and their scale.
pub(super) struct RepositoryScale {
    /// Engine memory, bytes.
    pub(super) memory: u64,
    /// Records of 1 KiB, or as many bytes (the most common over the runs).
    pub(super) records: u64,
    /// Operations of a run (the most common).
    pub(super) ops: u64,
    /// Runs at that memory.
    pub(super) runs: usize,
}

impl RepositoryScale {
    /// The scale of `engine`'s runs at `memory` (None: the repository must hold one memory size).
    pub(super) fn of(
        runs: &[cosine_learn::repo::RunRecord],
        engine: &str,
        memory: Option<u64>,
    ) -> Result<Self> {
        let mine: Vec<_> = runs.iter().filter(|r| r.engine == engine).collect();
        if mine.is_empty() {
            bail!(
                "the repository holds no runs of {engine} (collect some with cosine learn collect --engine {engine})"
            );
        }
        let memory = match memory {
            Some(m) => m,
            None => {
                let sizes: std::collections::BTreeSet<u64> =
                    mine.iter().map(|r| r.memory).collect();
                if sizes.len() != 1 {
                    bail!("the repository holds runs at several memory sizes ({sizes:?}): choose one with --memory");
                }
                *sizes.iter().next().expect("one size")
            }
        };
        let mine: Vec<_> = mine.into_iter().filter(|r| r.memory == memory).collect();
        if mine.is_empty() {
            bail!("the repository holds no runs of {engine} at {memory} bytes of memory");
        }
        let mode = |v: Vec<u64>| -> u64 {
            let mut counts = std::collections::BTreeMap::new();
            for x in v {
                *counts.entry(x).or_insert(0) += 1;
            }
            counts
                .into_iter()
                .max_by_key(|(_, c)| *c)
                .map_or(0, |(x, _)| x)
        };
        Ok(RepositoryScale {
            memory,
            records: mode(
                mine.iter()
                    .map(|r| {
                        r.workload_spec.record_count * r.workload_spec.value_bytes() as u64 / 1024
                    })
                    .collect(),
            ),
            ops: mode(
                mine.iter()
                    .map(|r| r.workload_spec.operation_count)
                    .collect(),
            ),
            runs: mine.len(),
        })
    }
}

//! The engines a cell opens: ours, each with the design the search picks for the workload and the memory
//! ([`OURS`]), RocksDB with Cosine's leveled design (`rocksdb-cosine`), and the peers' adapters.

use crate::args::machine_cores;
use anyhow::{anyhow, Result};
use cosine_cost_model::cpu::PhiLibrary;
use cosine_design::LogKind;
use cosine_engine::{Engine, Options, SyncMode};
use cosine_peers::adapters;
use cosine_ycsb::{CoreWorkload, CosineStore, Store};
use serde_json::Value;
use std::sync::Arc;

/// The engines that are ours, each running a design the search picks.
pub(crate) const OURS: [&str; 4] = [
    "cosine",
    "cosine-leveled",
    "cosine-lsh",
    "cosine-lsh-append-only",
];

/// Opens `engine` in `dir` for workload `w` with `memory` bytes.
pub(crate) fn open(
    engine: &str,
    w: &CoreWorkload,
    memory: u64,
    dir: &std::path::Path,
    durable: bool,
) -> Result<Box<dyn Store>> {
    open_designed(engine, w, memory, dir, durable, None).map(|(store, _)| store)
}

/// [`open`], with the design the search picked for an engine of ours or for `rocksdb-cosine` (what a cell's
/// row records, so that a table's picks can be checked from its evidence).
pub(crate) fn open_designed(
    engine: &str,
    w: &CoreWorkload,
    memory: u64,
    dir: &std::path::Path,
    durable: bool,
    given: Option<&cosine_design::Design>,
) -> Result<(Box<dyn Store>, Option<Value>)> {
    Ok(match engine {
        e if OURS.contains(&e) => {
            let model = w.to_model();
            let phi = PhiLibrary::default();
            let cores = machine_cores();
            let design = match engine {
                "cosine" if given.is_some() => given.cloned(),
                "cosine" => cosine_search::designs::best_for_machine(&model, memory, cores, &phi),
                "cosine-leveled" => cosine_search::designs::best_leveled_lsm_for_machine(
                    &model, memory, cores, &phi,
                ),
                _ => {
                    let log = if engine == "cosine-lsh" {
                        LogKind::Hybrid
                    } else {
                        LogKind::AppendOnly
                    };
                    cosine_search::designs::lsh_for_machine(&model, memory, cores, &phi, log)
                }
            }
            .ok_or_else(|| anyhow!("no {engine} design for {memory} bytes"))?;
            eprintln!(
                "{engine}: {} T={} K={} Z={} M_B={} M_BF={} M_FP={} M_BC={}",
                design.class.map_or("unclassified", |c| c.as_str()),
                design.size_ratio,
                design.hot_runs,
                design.cold_runs,
                design.buffer_bytes,
                design.filter_bytes,
                design.fence_bytes,
                design.cache_bytes
            );
            let sync = if durable {
                SyncMode::Batch
            } else {
                SyncMode::Never
            };
            let store: Box<dyn Store> = Box::new(CosineStore(Arc::new(Engine::open_with(
                dir,
                &design,
                Options::with_sync(sync),
            )?)));
            (store, serde_json::to_value(&design).ok())
        }
        "rocksdb-cosine" => {
            let design = cosine_search::designs::best_leveled_lsm_for_machine(
                &w.to_model(),
                memory,
                machine_cores(),
                &PhiLibrary::default(),
            )
            .ok_or_else(|| anyhow!("no leveled LSM design for {memory} bytes"))?;
            eprintln!(
                "rocksdb-cosine: T={} M_B={} M_BF={} M_FP={}",
                design.size_ratio, design.buffer_bytes, design.filter_bytes, design.fence_bytes
            );
            (
                adapters::open_rocksdb_tuned(&design, w.record_count, memory, dir, durable)?,
                serde_json::to_value(&design).ok(),
            )
        }
        other => (adapters::open(other, memory, dir, durable)?, None),
    })
}

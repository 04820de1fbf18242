//! RocksDB as an engine `cosine learn` collects runs of and tunes (RTune's own subject): its knob space
//! ([`cosine_learn::knobs::rocksdb_space`]) turned into `rocksdb::Options`, and a measured run under the YCSB
//! harness (load, settle, run, settle; every read verified) with RocksDB's statistics as internal metrics.

use crate::adapters::rocksdb::Rocks;
use anyhow::Context;
use cosine_learn::collect::Measurer;
use cosine_learn::knobs::{
    rocksdb_defaults, rocksdb_from_design, rocksdb_settings, rocksdb_space, KnobSpace,
};
use cosine_learn::repo::Outcome;
use cosine_learn::{Error, Result};
use cosine_ycsb::{run_phase, CoreWorkload, Ledger};
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::PathBuf;

/// Seconds a run waits for RocksDB to finish its background work after the load and after the run.
pub const SETTLE_SECONDS: u64 = 20;

/// RocksDB run in process, in a fresh directory under `work` per run.
pub struct RocksMeasurer {
    space: KnobSpace,
    /// Where runs keep their data (deleted after each run).
    pub work: PathBuf,
    /// Client threads.
    pub threads: usize,
    /// How long a run waits for RocksDB's background work after the load and after the run.
    pub settle_limit: std::time::Duration,
}

impl RocksMeasurer {
    /// RocksDB, its runs' data under `work`, driven by `threads` client threads.
    pub fn new(work: PathBuf, threads: usize) -> Self {
        RocksMeasurer {
            space: rocksdb_space(),
            work,
            threads: threads.max(1),
            settle_limit: std::time::Duration::from_secs(SETTLE_SECONDS),
        }
    }
}

/// `rocksdb::Options` from the settings [`rocksdb_settings`] makes: no WAL sync (every write handed to the OS),
/// statistics on.
pub fn options(s: &Value) -> anyhow::Result<rocksdb::Options> {
    let u = |k: &str| -> anyhow::Result<u64> {
        s.get(k)
            .and_then(Value::as_u64)
            .with_context(|| format!("setting {k}"))
    };
    let i = |k: &str| -> anyhow::Result<i64> {
        s.get(k)
            .and_then(Value::as_i64)
            .with_context(|| format!("setting {k}"))
    };
    let f = |k: &str| -> anyhow::Result<f64> {
        s.get(k)
            .and_then(Value::as_f64)
            .with_context(|| format!("setting {k}"))
    };
    let text = |k: &str| -> anyhow::Result<&str> {
        s.get(k)
            .and_then(Value::as_str)
            .with_context(|| format!("setting {k}"))
    };
    let mut o = rocksdb::Options::default();
    o.create_if_missing(true);
    o.enable_statistics();
    o.set_write_buffer_size(u("write_buffer_size")? as usize);
    o.set_max_write_buffer_number(i("max_write_buffer_number")? as i32);
    o.set_min_write_buffer_number_to_merge(i("min_write_buffer_number_to_merge")? as i32);
    o.set_db_write_buffer_size(
        (u("write_buffer_size")? * i("max_write_buffer_number")? as u64) as usize,
    );
    o.set_level_zero_file_num_compaction_trigger(i("level0_file_num_compaction_trigger")? as i32);
    o.set_level_zero_slowdown_writes_trigger(i("level0_slowdown_writes_trigger")? as i32);
    o.set_level_zero_stop_writes_trigger(i("level0_stop_writes_trigger")? as i32);
    o.set_max_bytes_for_level_base(u("max_bytes_for_level_base")?);
    o.set_max_bytes_for_level_multiplier(f("max_bytes_for_level_multiplier")?);
    o.set_target_file_size_base(u("target_file_size_base")?);
    o.set_target_file_size_multiplier(i("target_file_size_multiplier")? as i32);
    o.set_num_levels(i("num_levels")? as i32);
    o.set_compaction_style(match text("compaction_style")? {
        "universal" => rocksdb::DBCompactionStyle::Universal,
        _ => rocksdb::DBCompactionStyle::Level,
    });
    o.set_max_background_jobs(i("max_background_jobs")? as i32);
    let compression = match text("compression")? {
        "snappy" => rocksdb::DBCompressionType::Snappy,
        "lz4" => rocksdb::DBCompressionType::Lz4,
        "zstd" => rocksdb::DBCompressionType::Zstd,
        _ => rocksdb::DBCompressionType::None,
    };
    o.set_compression_type(compression);
    o.set_bottommost_compression_type(compression);
    o.set_bloom_locality(i("bloom_locality")? as u32);
    o.set_memtable_prefix_bloom_ratio(f("memtable_prefix_bloom_size_ratio")?);
    o.set_max_open_files(i("max_open_files")? as i32);
    let mut table = rocksdb::BlockBasedOptions::default();
    table.set_block_size(u("block_size")? as usize);
    table.set_block_cache(&rocksdb::Cache::new_lru_cache(
        u("block_cache_size")? as usize
    )?);
    let cached = s
        .get("cache_index_and_filter_blocks")
        .and_then(Value::as_bool)
        .unwrap_or(true);
    table.set_cache_index_and_filter_blocks(cached);
    table.set_pin_l0_filter_and_index_blocks_in_cache(cached);
    let bits = f("bloom_bits_per_key")?;
    if bits >= 1.0 {
        table.set_bloom_filter(bits, false);
    }
    o.set_block_based_table_factory(&table);
    Ok(o)
}

/// RocksDB's statistics dump as numbers: every ticker's COUNT (`rocksdb.block.cache.miss`) and every
/// histogram's P50, P99 and COUNT (`rocksdb.db.get.micros.p50`).
pub fn parse_statistics(text: &str) -> BTreeMap<String, f64> {
    let mut out = BTreeMap::new();
    for line in text.lines() {
        let mut words = line.split_whitespace();
        let Some(name) = words.next() else { continue };
        let rest: Vec<&str> = words.collect();
        // "name COUNT : 12" or "name P50 : 1.0 P95 : ... COUNT : 3 SUM : 4"
        let mut k = 0;
        while k + 2 < rest.len() {
            if rest[k + 1] == ":" {
                if let (Some(label), Some(v)) = (rest.get(k), rest.get(k + 2)) {
                    if let Ok(x) = v.parse::<f64>() {
                        let key = match *label {
                            "COUNT" if k == 0 => name.to_string(),
                            "COUNT" => format!("{name}.count"),
                            "P50" => format!("{name}.p50"),
                            "P99" => format!("{name}.p99"),
                            _ => String::new(),
                        };
                        if !key.is_empty() {
                            out.insert(key, x);
                        }
                    }
                }
                k += 3;
            } else {
                k += 1;
            }
        }
    }
    out
}

/// The write-stall trigger of RocksDB settings ([`rocksdb_settings`]'s names).
pub fn stall_trigger(s: &Value) -> crate::adapters::rocksdb::StallTrigger {
    let d = crate::adapters::rocksdb::StallTrigger::default();
    let n = |k: &str, default: u64| s.get(k).and_then(Value::as_u64).unwrap_or(default);
    crate::adapters::rocksdb::StallTrigger {
        slowdown: n("level0_slowdown_writes_trigger", d.slowdown),
        universal: s.get("compaction_style").and_then(Value::as_str) == Some("universal"),
        memtables: n("max_write_buffer_number", d.memtables),
        merge: n("min_write_buffer_number_to_merge", d.merge),
        compaction: n("level0_file_num_compaction_trigger", d.compaction),
        stop: n("level0_stop_writes_trigger", d.stop),
    }
}

impl Measurer for RocksMeasurer {
    fn engine(&self) -> &'static str {
        "rocksdb"
    }

    fn version(&self) -> String {
        "7.8.3 (Debian librocksdb-dev, rocksdb crate 0.20.1)".into()
    }

    fn space(&self) -> &KnobSpace {
        &self.space
    }

    fn settings(&self, point: &[f64], memory: u64) -> Result<Value> {
        rocksdb_settings(&self.space, point, memory)
    }

    fn defaults(&self, memory: u64) -> (Vec<f64>, Value) {
        rocksdb_defaults(&self.space, memory)
    }

    /// Cosine's fastest leveled LSM design for the workload at `memory` on this machine's cores, in RocksDB's
    /// terms ([`rocksdb_from_design`]: what the peer benchmark's `rocksdb-cosine` runs).
    fn model_pick(&self, w: &CoreWorkload, memory: u64) -> Option<(Vec<f64>, Value)> {
        let cores = std::thread::available_parallelism().map_or(1, |n| n.get() as u32);
        let design = cosine_search::designs::best_leveled_lsm_for_machine(
            &w.to_model(),
            memory,
            cores,
            &cosine_cost_model::cpu::PhiLibrary::default(),
        )?;
        Some(rocksdb_from_design(
            &self.space,
            &design,
            w.record_count,
            memory,
        ))
    }

    fn measure(
        &self,
        w: &CoreWorkload,
        settings: &Value,
        _memory: u64,
        seed: u64,
    ) -> Result<(BTreeMap<String, f64>, Outcome)> {
        let fail = |message: String| Error::Run {
            workload: w.name.clone(),
            config: settings.to_string(),
            message,
        };
        static RUN: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
        let n = RUN.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let dir = self
            .work
            .join(format!("rocksdb-learn-{}-{n}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let opts = options(settings).map_err(|e| fail(format!("{e:#}")))?;
        let mut store = Rocks::with(opts, &dir, false).map_err(|e| fail(format!("{e:#}")))?;
        store.stall = stall_trigger(settings);
        let ledger = Ledger::default();
        let load = run_phase(&store, &ledger, w, self.threads, true, seed, None);
        let limit = self.settle_limit;
        let settled_load = store
            .settle_within(limit)
            .map_err(|e| fail(e.to_string()))?
            .settled;
        let before = parse_statistics(&store.statistics().unwrap_or_default());
        let run = run_phase(&store, &ledger, w, self.threads, false, seed + 1, None);
        // the settle's working time: a configuration that keeps a compaction pending without running it is
        // timed up to its last flush or compaction, not over the wait that finds it stuck
        let settle = store
            .settle_within(limit)
            .map_err(|e| fail(e.to_string()))?;
        let (settled_run, settle_seconds) = (settle.settled, settle.working.as_secs_f64());
        let after = parse_statistics(&store.statistics().unwrap_or_default());
        let sst = store.property("rocksdb.total-sst-files-size").unwrap_or(0);
        drop(store);
        let _ = std::fs::remove_dir_all(&dir);
        for (phase, r) in [("load", &load), ("run", &run)] {
            if r.errors > 0 || r.wrong > 0 {
                return Err(fail(format!(
                    "{phase}: {} errors, {} wrong results{}",
                    r.errors,
                    r.wrong,
                    r.first_wrong
                        .as_deref()
                        .map_or(String::new(), |f| format!(" (the first: {f})"))
                )));
            }
        }
        let ops = (load.operations + run.operations).max(1) as f64;
        let mut metrics = BTreeMap::new();
        // 1 where RocksDB still reported pending background work after the settle's time limit
        metrics.insert(
            "settle.unsettled_load".to_string(),
            f64::from(u8::from(!settled_load)),
        );
        metrics.insert(
            "settle.unsettled_run".to_string(),
            f64::from(u8::from(!settled_run)),
        );
        for (k, v) in &after {
            if k.ends_with(".p50") || k.ends_with(".p99") {
                metrics.insert(k.clone(), *v);
            } else {
                metrics.insert(k.clone(), v / ops);
            }
        }
        let get = |m: &BTreeMap<String, f64>, k: &str| m.get(k).copied().unwrap_or(0.0);
        let delta = |k: &str| get(&after, k) - get(&before, k);
        // the timed run's writes and the flushes and compactions they caused (up to the settle after it)
        let user = delta("rocksdb.bytes.written");
        let device_writes =
            delta("rocksdb.compact.write.bytes") + delta("rocksdb.flush.write.bytes");
        let live = (w.record_count + run.inserted) as f64 * (w.value_bytes() as f64 + 23.0);
        let misses =
            get(&after, "rocksdb.block.cache.miss") - get(&before, "rocksdb.block.cache.miss");
        let compaction_blocks = (get(&after, "rocksdb.compact.read.bytes")
            - get(&before, "rocksdb.compact.read.bytes")
            + get(&after, "rocksdb.compact.write.bytes")
            - get(&before, "rocksdb.compact.write.bytes")
            + get(&after, "rocksdb.flush.write.bytes")
            - get(&before, "rocksdb.flush.write.bytes"))
            / 4096.0;
        let outcome = Outcome {
            throughput: run.throughput,
            seconds: run.seconds + settle_seconds,
            p99_us: cosine_learn::collect::main_p99(&run),
            write_amplification: cosine_learn::collect::phase_write_amplification(
                device_writes,
                user,
            ),
            space_amplification: if live > 0.0 { sst as f64 / live } else { 0.0 },
            // blocks read from files (block cache misses) and flush and compaction traffic in 4 KiB blocks,
            // per operation of the run: the counterpart of our engine's block counts
            ios_per_op: Some((misses + compaction_blocks) / run.operations.max(1) as f64),
            peak_resident_bytes: None,
        };
        Ok((metrics, outcome))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn statistics_parse() {
        let text = "rocksdb.block.cache.miss COUNT : 12\nrocksdb.db.get.micros P50 : 1.5 P95 : 3.0 P99 : 4.25 P100 : 9.0 COUNT : 7 SUM : 20\n";
        let m = parse_statistics(text);
        assert_eq!(m["rocksdb.block.cache.miss"], 12.0);
        assert_eq!(m["rocksdb.db.get.micros.p50"], 1.5);
        assert_eq!(m["rocksdb.db.get.micros.p99"], 4.25);
        assert_eq!(m["rocksdb.db.get.micros.count"], 7.0);
    }

    /// A configuration that keeps a compaction pending without running it (universal compaction, from a
    /// collection's Latin-hypercube samples) is not waited on for the settle's whole limit, and its working
    /// time ends with its last flush or compaction: before, such runs were timed 20 s longer than they worked.
    #[test]
    fn a_settle_does_not_wait_out_a_compaction_rocksdb_never_runs() {
        use cosine_ycsb::Store;
        let settings: Value = serde_json::from_str(
            r#"{"block_cache_size": 3884932, "block_size": 4096, "bloom_bits_per_key": 4.08, "bloom_locality": 1,
            "cache_index_and_filter_blocks": false, "compaction_style": "universal", "compression": "zstd",
            "level0_file_num_compaction_trigger": 3, "level0_slowdown_writes_trigger": 11,
            "level0_stop_writes_trigger": 38, "max_background_jobs": 2, "max_bytes_for_level_base": 57062062,
            "max_bytes_for_level_multiplier": 10.575, "max_open_files": 1002, "max_write_buffer_number": 3,
            "memtable_prefix_bloom_size_ratio": 0.027825, "min_write_buffer_number_to_merge": 2, "num_levels": 5,
            "target_file_size_base": 18846693, "target_file_size_multiplier": 3, "write_buffer_size": 103123}"#,
        )
        .unwrap();
        let dir = tempfile::tempdir().unwrap();
        let mut store = Rocks::with(options(&settings).unwrap(), dir.path(), false).unwrap();
        store.stall = stall_trigger(&settings);
        let value = vec![7u8; 1000];
        for i in 0..20_000u32 {
            store.insert(&i.to_be_bytes(), &value).unwrap();
        }
        let limit = std::time::Duration::from_secs(60);
        let started = std::time::Instant::now();
        let s = store.settle_within(limit).unwrap();
        let waited = started.elapsed();
        assert!(
            waited < std::time::Duration::from_secs(30),
            "{waited:?} {s:?}"
        );
        assert!(s.working <= waited);
        if !s.settled {
            // a stuck settle gave up after a quiet second, and that second is not working time
            assert!(
                waited >= s.working + crate::adapters::rocksdb::STUCK_PENDING_QUIET,
                "{waited:?} {s:?}"
            );
        }
    }

    /// A tiny collection and tuning of RocksDB, end to end: runs recorded with RocksDB's statistics as
    /// metrics, every read verified, and the pipeline's structure on them.
    #[test]
    fn rocksdb_collects_and_tunes() {
        use cosine_learn::collect::{collect, CollectPlan};
        use cosine_learn::repo::Repository;
        let dir = tempfile::tempdir().unwrap();
        let mut m = RocksMeasurer::new(dir.path().to_path_buf(), 1);
        m.settle_limit = std::time::Duration::from_secs(2);
        let repo = Repository::at(dir.path().join("repo"));
        let ws: Vec<CoreWorkload> = ["rw90-1k", "rw10-1k", "upd-1k", "rw50-4k"]
            .iter()
            .map(|n| cosine_learn::workloads::by_name(n, 500, 200).unwrap())
            .collect();
        let plan = CollectPlan {
            workloads: ws,
            configs: 12,
            memory: 4 << 20,
            seed: 1,
            deadline: None,
        };
        let r = collect(&m, &repo, &plan, &mut |_, _, _| {}).unwrap();
        assert_eq!(r.measured, 48);
        let runs = repo.load().unwrap();
        assert!(runs.iter().all(|r| r.engine == "rocksdb"));
        assert!(
            runs[0].metrics.contains_key("rocksdb.bytes.written"),
            "{:?}",
            runs[0].metrics.keys().take(5).collect::<Vec<_>>()
        );
        assert!(runs.iter().all(|r| r.outcome.write_amplification > 0.0));
        let spec = cosine_learn::tune::TuneSpec {
            target: cosine_learn::workloads::by_name("ycsb-a", 500, 200).unwrap(),
            memory: 4 << 20,
            probes: 3,
            verify: 2,
            seed: 1,
            model_feature: false,
            model_probe: true,
            train: cosine_learn::surrogate::TrainSpec {
                epochs: 10,
                ..Default::default()
            },
            ga: cosine_learn::ga::GaSpec {
                generations: 10,
                ..Default::default()
            },
            min_rank_correlation: -1.0,
            objective: cosine_learn::tune::Objective::Rtune,
            fitness: cosine_learn::tune::Fitness::Mean,
            matching: cosine_learn::tune::Matching::Combined,
        };
        let t = cosine_learn::tune::tune(&m, &runs, &spec, &mut |_| {}).unwrap();
        assert_eq!(t.candidates.len(), 2);
        assert_eq!(t.matches.len(), 4);
        // the candidate's settings open a database
        let best = &t.candidates[t.best].run.settings;
        options(best).unwrap();
        // the model's pick was measured on the target, within the memory budget like every configuration
        let model = t.model.as_ref().expect("RocksDB has a model pick");
        let n = |k: &str| model.run.settings[k].as_u64().unwrap();
        assert!(
            n("write_buffer_size") * n("max_write_buffer_number") + n("block_cache_size")
                <= 4 << 20,
            "{}",
            model.run.settings
        );
    }
}

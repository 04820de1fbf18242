//! Measuring configurations on workloads into a repository (RTune's data generation, §3.1).
//!
//! Each workload gets the engine's defaults, the analytical model's pick for it, and Latin-hypercube samples
//! of the knob space (the same samples for every workload, as RTune runs its 20,000 configurations on each of
//! its 16 workloads). Runs go configuration by configuration, every workload in turn, so a time budget that
//! stops the collection leaves every workload with about as many runs. A run already in the repository (same
//! engine, workload, scale, memory, seed and configuration) is not measured again.

use crate::knobs::{
    cosine_default, cosine_design, cosine_point, cosine_space, KnobSpace, KnobValues,
};
use crate::lhs::latin_blocks;
use crate::repo::{config_id, Machine, Outcome, Repository, RunRecord, Source};
use crate::{Error, Result};
use cosine_cost_model::cpu::PhiLibrary;
use cosine_cost_model::{DistributionAware, IoModel};
use cosine_design::Design;
use cosine_engine::SyncMode;
use cosine_validate::{run_bench, searched_design, NoProgress, Run, RunSpec};
use cosine_ycsb::{CoreWorkload, PhaseReport};
use serde_json::Value;
use std::collections::{BTreeMap, HashSet};
use std::path::PathBuf;
use std::time::Instant;

/// An engine the tuner measures: its knob space, how a point becomes its settings, and a measured run.
pub trait Measurer {
    /// The engine's name, as the repository records it.
    fn engine(&self) -> &'static str;
    /// The engine's version.
    fn version(&self) -> String;
    /// Its knobs.
    fn space(&self) -> &KnobSpace;
    /// The settings of a point (our engine: the design.json), within `memory` bytes.
    fn settings(&self, point: &[f64], memory: u64) -> Result<Value>;
    /// The engine's default settings at `memory`, with the point nearest them.
    fn defaults(&self, memory: u64) -> (Vec<f64>, Value);
    /// The analytical model's pick for a workload at `memory`, with the point nearest it (None: the engine
    /// has no model pick).
    fn model_pick(&self, w: &CoreWorkload, memory: u64) -> Option<(Vec<f64>, Value)>;
    /// The analytical model's predicted I/Os per operation of these settings on a workload (None: the engine
    /// has no model).
    fn model_ios(&self, _settings: &Value, _w: &CoreWorkload) -> Option<f64> {
        None
    }
    /// Loads the workload's records, runs its operations, and returns the internal metrics and the outcome.
    fn measure(
        &self,
        w: &CoreWorkload,
        settings: &Value,
        memory: u64,
        seed: u64,
    ) -> Result<(BTreeMap<String, f64>, Outcome)>;
}

/// Our engine, run in process under the YCSB harness (load, settle, run; every read verified), in a fresh
/// directory under `work` per run.
pub struct CosineMeasurer {
    space: KnobSpace,
    /// Where runs keep their data (deleted after each run).
    pub work: PathBuf,
    /// Client threads.
    pub threads: usize,
}

impl CosineMeasurer {
    /// Our engine, its runs' data under `work`, driven by `threads` client threads.
    pub fn new(work: PathBuf, threads: usize) -> Self {
        CosineMeasurer {
            space: cosine_space(),
            work,
            threads: threads.max(1),
        }
    }
}

fn design_json(d: &Design) -> Value {
    serde_json::to_value(d).unwrap_or(Value::Null)
}

/// The metrics of our engine's run: counters per operation of the load and the run together, the shape at
/// the end, and the run's per-type I/O and latencies.
pub fn cosine_metrics(r: &Run) -> BTreeMap<String, f64> {
    let s = &r.stats;
    let ops = (r.load.operations + r.run.operations).max(1) as f64;
    let mut m = BTreeMap::new();
    let mut put = |k: String, v: f64| {
        if v.is_finite() {
            m.insert(k, v);
        }
    };
    put("bytes_flushed".into(), s.bytes_flushed as f64 / ops);
    put(
        "bytes_compacted_read".into(),
        s.bytes_compacted_read as f64 / ops,
    );
    put(
        "bytes_compacted_written".into(),
        s.bytes_compacted_written as f64 / ops,
    );
    put("subcompactions".into(), s.subcompactions as f64 / ops);
    put(
        "user_bytes_written".into(),
        s.user_bytes_written as f64 / ops,
    );
    put("write_amplification".into(), s.write_amplification);
    put("space_amplification".into(), s.space_amplification);
    put(
        "disk_bytes_per_record".into(),
        s.disk_bytes as f64 / r.load.operations.max(1) as f64,
    );
    put(
        "levels".into(),
        s.levels.iter().filter(|l| l.runs > 0).count() as f64,
    );
    put(
        "runs".into(),
        s.levels.iter().map(|l| l.runs).sum::<usize>() as f64,
    );
    put(
        "files".into(),
        s.levels.iter().map(|l| l.files).sum::<usize>() as f64,
    );
    put("cache_hits".into(), s.cache.hits as f64 / ops);
    put("cache_misses".into(), s.cache.misses as f64 / ops);
    put("cache_fills".into(), s.cache.fills as f64 / ops);
    // levels 1-4 each, and everything deeper together
    let mut per_level: BTreeMap<String, f64> = BTreeMap::new();
    for l in &s.levels {
        let name = if l.level <= 4 {
            format!("l{}", l.level)
        } else {
            "l5+".to_string()
        };
        for (k, v) in [
            ("block_reads", l.io.block_reads),
            ("index_reads", l.io.index_reads),
            ("block_writes", l.io.block_writes),
            ("filter_probes", l.io.filter_probes),
            ("filter_negatives", l.io.filter_negatives),
            ("false_positives", l.io.false_positives),
            ("compaction_reads", l.io.compaction_reads),
        ] {
            *per_level.entry(format!("{name}.{k}")).or_default() += v as f64 / ops;
        }
        *per_level.entry(format!("{name}.bytes_share")).or_default() +=
            l.bytes as f64 / s.disk_bytes.max(1) as f64;
    }
    for (k, v) in per_level {
        put(k, v);
    }
    put(
        "run.read_ios_per_op".into(),
        r.run.read_ios_per_op.unwrap_or(0.0),
    );
    put(
        "run.background_ios_per_op".into(),
        r.run.background_ios_per_op.unwrap_or(0.0),
    );
    for (name, o) in &r.run.ops {
        put(
            format!("run.{name}.share"),
            o.count as f64 / r.run.operations.max(1) as f64,
        );
        put(format!("run.{name}.p50_us"), o.p50_us);
        put(format!("run.{name}.p99_us"), o.p99_us);
        if let Some(io) = o.read_ios {
            put(format!("run.{name}.read_ios"), io);
        }
    }
    put("load.throughput".into(), r.load.throughput);
    m
}

/// The 99th-percentile latency of a phase's most frequent operation type, microseconds (0 without operations).
pub fn main_p99(r: &PhaseReport) -> f64 {
    r.ops
        .iter()
        .max_by_key(|(_, o)| o.count)
        .map_or(0.0, |(_, o)| o.p99_us)
}

/// Write amplification of a phase: device bytes flushed and merged over the bytes the user wrote in it (1 when
/// the phase wrote nothing, so a read-only target compares equal).
pub fn phase_write_amplification(device_bytes: f64, user_bytes: f64) -> f64 {
    if user_bytes > 0.0 {
        device_bytes / user_bytes
    } else {
        1.0
    }
}

/// The outcome of our engine's run, of the timed run alone (the load is the same for every configuration of
/// a workload's scale and says nothing of the target's mix): its throughput and p99, its time with the settle
/// that flushes and merges what it wrote, the write amplification of those writes, the space amplification at
/// the end, and the device I/Os per operation.
pub fn cosine_outcome(r: &Run) -> Outcome {
    let (a, b) = (&r.before_run, &r.stats);
    let device = (b.bytes_flushed + b.bytes_compacted_written)
        .saturating_sub(a.bytes_flushed + a.bytes_compacted_written) as f64;
    let user = b.user_bytes_written.saturating_sub(a.user_bytes_written) as f64;
    Outcome {
        throughput: r.run.throughput,
        seconds: r.run.seconds + r.settle_seconds,
        p99_us: main_p99(&r.run),
        write_amplification: phase_write_amplification(device, user),
        space_amplification: b.space_amplification,
        ios_per_op: match (r.run.read_ios_per_op, r.run.background_ios_per_op) {
            (Some(x), Some(y)) => Some(x + y),
            _ => None,
        },
        // runs share the process: its peak is the largest run's so far, not this one's
        peak_resident_bytes: None,
    }
}

impl Measurer for CosineMeasurer {
    fn engine(&self) -> &'static str {
        "cosine"
    }

    fn version(&self) -> String {
        env!("CARGO_PKG_VERSION").to_string()
    }

    fn space(&self) -> &KnobSpace {
        &self.space
    }

    fn settings(&self, point: &[f64], memory: u64) -> Result<Value> {
        Ok(design_json(&cosine_design(&self.space, point, memory)?))
    }

    fn defaults(&self, memory: u64) -> (Vec<f64>, Value) {
        let d = cosine_default(memory);
        (cosine_point(&self.space, &d, memory), design_json(&d))
    }

    fn model_pick(&self, w: &CoreWorkload, memory: u64) -> Option<(Vec<f64>, Value)> {
        let phi = PhiLibrary::default();
        let d = searched_design(w, memory, &phi).ok()?;
        Some((cosine_point(&self.space, &d, memory), design_json(&d)))
    }

    fn model_ios(&self, settings: &Value, w: &CoreWorkload) -> Option<f64> {
        let d = Design::from_json(&settings.to_string()).ok()?;
        DistributionAware::new()
            .evaluate(&d, &w.to_model())
            .ok()
            .map(|c| c.per_operation)
            .filter(|x| x.is_finite())
    }

    fn measure(
        &self,
        w: &CoreWorkload,
        settings: &Value,
        _memory: u64,
        seed: u64,
    ) -> Result<(BTreeMap<String, f64>, Outcome)> {
        let design = Design::from_json(&settings.to_string())
            .map_err(|e| Error::Invalid(format!("settings are not a design: {e}")))?;
        static RUN: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
        let n = RUN.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let dir = self
            .work
            .join(format!("cosine-learn-{}-{n}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let fail = |message: String| Error::Run {
            workload: w.name.clone(),
            config: settings.to_string(),
            message,
        };
        let r = run_bench(
            &design,
            w,
            &dir,
            RunSpec {
                threads: self.threads,
                sync: SyncMode::Never,
                seed,
                warm_up_writes: 0,
                slices: 1,
                // a timed run: the client writes as fast as the engine takes it
                pace: None,
                progress: &NoProgress,
            },
        );
        let _ = std::fs::remove_dir_all(&dir);
        let r = r.map_err(|e| fail(e.to_string()))?;
        if r.run.errors > 0 || r.load.errors > 0 {
            return Err(fail(format!(
                "{} errors in the load and the run",
                r.run.errors + r.load.errors
            )));
        }
        Ok((cosine_metrics(&r), cosine_outcome(&r)))
    }
}

/// One configuration to measure.
#[derive(Clone, Debug, PartialEq)]
pub struct Config {
    /// Where it came from.
    pub source: Source,
    /// Its point in the knob space.
    pub point: Vec<f64>,
    /// Its knob values.
    pub knobs: KnobValues,
    /// The engine's settings.
    pub settings: Value,
    /// Its id.
    pub id: String,
}

impl Config {
    /// A configuration from a point and the settings it runs with.
    pub fn new(
        space: &KnobSpace,
        source: Source,
        point: Vec<f64>,
        settings: Value,
        memory: u64,
    ) -> Self {
        let point = space.canonical(&point);
        Config {
            source,
            knobs: space.values(&point),
            id: config_id(&settings, memory),
            point,
            settings,
        }
    }
}

/// Measures one configuration on one workload and returns the record (not yet appended).
pub fn measure_one(
    m: &dyn Measurer,
    w: &CoreWorkload,
    c: &Config,
    memory: u64,
    seed: u64,
) -> Result<RunRecord> {
    let (metrics, outcome) = m.measure(w, &c.settings, memory, seed)?;
    Ok(RunRecord {
        engine: m.engine().to_string(),
        engine_version: m.version(),
        machine: Machine::here(),
        workload: w.name.clone(),
        workload_spec: w.clone(),
        memory,
        seed,
        source: c.source,
        config: c.id.clone(),
        knobs: c.knobs.clone(),
        settings: c.settings.clone(),
        metrics,
        outcome,
        at: std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_secs()),
    })
}

/// What to collect.
#[derive(Clone, Debug)]
pub struct CollectPlan {
    /// The workloads (each at its record and operation counts).
    pub workloads: Vec<CoreWorkload>,
    /// Configurations per workload: the defaults, the model's pick, and Latin-hypercube samples for the rest.
    pub configs: usize,
    /// Engine memory, bytes.
    pub memory: u64,
    /// Seed of the samples and of the request generators.
    pub seed: u64,
    /// Stop starting runs after this instant.
    pub deadline: Option<Instant>,
}

/// What a collection did.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct CollectReport {
    /// Runs measured and appended.
    pub measured: usize,
    /// Runs already in the repository.
    pub skipped: usize,
    /// The time budget ran out before every run was made.
    pub out_of_time: bool,
}

/// The key a run is found by when a collection resumes.
fn run_key(engine: &str, w: &CoreWorkload, memory: u64, seed: u64, config: &str) -> String {
    format!(
        "{engine}|{}|{}|{}|{memory}|{seed}|{config}",
        w.name, w.record_count, w.operation_count
    )
}

/// Points per Latin hypercube of a collection's samples: more configurations extend the blocks (a repository
/// grows without re-measuring what it has).
pub const LHS_BLOCK: usize = 16;

/// The configurations of a plan for one workload, in the order they are measured.
pub fn plan_configs(m: &dyn Measurer, plan: &CollectPlan, w: &CoreWorkload) -> Result<Vec<Config>> {
    let space = m.space();
    let mut out = Vec::with_capacity(plan.configs);
    let (u, s) = m.defaults(plan.memory);
    out.push(Config::new(space, Source::Default, u, s, plan.memory));
    if let Some((u, s)) = m.model_pick(w, plan.memory) {
        out.push(Config::new(space, Source::Model, u, s, plan.memory));
    }
    let samples = plan.configs.saturating_sub(out.len());
    for u in latin_blocks(samples, space.dim(), LHS_BLOCK, plan.seed) {
        let s = m.settings(&u, plan.memory)?;
        out.push(Config::new(space, Source::Lhs, u, s, plan.memory));
    }
    out.truncate(plan.configs.max(1));
    Ok(out)
}

/// Runs a plan into a repository, calling `each` after every run appended.
pub fn collect(
    m: &dyn Measurer,
    repo: &Repository,
    plan: &CollectPlan,
    each: &mut dyn FnMut(&RunRecord, usize, usize),
) -> Result<CollectReport> {
    if plan.workloads.is_empty() || plan.configs == 0 {
        return Err(Error::Invalid(
            "nothing to collect: no workloads or no configurations".into(),
        ));
    }
    let done: HashSet<String> = repo
        .load()?
        .iter()
        .filter(|r| r.engine == m.engine())
        .map(|r| run_key(&r.engine, &r.workload_spec, r.memory, r.seed, &r.config))
        .collect();
    let per_workload: Vec<Vec<Config>> = plan
        .workloads
        .iter()
        .map(|w| plan_configs(m, plan, w))
        .collect::<Result<_>>()?;
    let total: usize = per_workload.iter().map(Vec::len).sum();
    let mut report = CollectReport::default();
    let rounds = per_workload.iter().map(Vec::len).max().unwrap_or(0);
    let mut at = 0;
    for i in 0..rounds {
        for (w, configs) in plan.workloads.iter().zip(&per_workload) {
            let Some(c) = configs.get(i) else { continue };
            at += 1;
            if done.contains(&run_key(m.engine(), w, plan.memory, plan.seed, &c.id)) {
                report.skipped += 1;
                continue;
            }
            if plan.deadline.is_some_and(|d| Instant::now() >= d) {
                report.out_of_time = true;
                return Ok(report);
            }
            let r = measure_one(m, w, c, plan.memory, plan.seed)?;
            repo.append(&r)?;
            report.measured += 1;
            each(&r, at, total);
        }
    }
    Ok(report)
}

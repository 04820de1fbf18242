//! One case's model-against-engine comparison, and the summary over many.

use crate::cases::Case;
use crate::harness::{run_bench, NoProgress, RunSpec};
use crate::pace::{pace_of, Pace};
use crate::{Error, Result};
use cosine_cost_model::loaded::LOAD_SPREAD;
use cosine_cost_model::IoModel;
use cosine_engine::SyncMode;
use serde_json::{json, Value};

/// Slices of a validate run: its operations meet the tree at this many points spread over the second half of
/// the warm-up, so one run does not measure a single moment of the merge cycle (a level just merged away, or
/// just about to be).
pub const VALIDATE_SLICES: u64 = 8;

/// Accuracy 1 − |p − m| / m (NaN when nothing was measured).
pub fn accuracy(p: f64, m: f64) -> f64 {
    if m > 0.0 {
        1.0 - (p - m).abs() / m
    } else {
        f64::NAN
    }
}

/// Runs one case (in a fresh directory under the system's temporary folder, `i` naming it) and compares the
/// model's I/Os per operation with the engine's, in total and per operation type: one row of the report as
/// JSON (label, class, workload, threads, design, predicted, measured, accuracy, lookup, scan, write, the tree
/// the run met).
pub fn run_case(c: &Case, i: usize) -> Result<Value> {
    run_case_loads(c, i, 1, SyncMode::Never, Pace::Merged)
}

/// [`run_case`] over `loads` fresh loads of the engine (a read-only cell's loads spread over
/// [`LOAD_SPREAD`] either side of its records, the window the model averages a load's end over, and the row
/// holds their mean rather than the median). A free writer's flushes and merges run beside it, so
/// one load can leave a different tree from the next (a read-only cell of a B-tree-like design measured 1.8
/// and 4.7 blocks a lookup in two loads); paced loads repeat their figures but for what the entry cache and
/// file residency keep. The row holds the median of each measured figure (in
/// total and per operation type, each on its own; the mean of the middle two for an even count), the tree of
/// the load whose total is the (lower) median, and
/// `loads` with `measured_range` (the least and the most I/Os per operation measured).
///
/// `sync` is the log's sync mode the engine runs with, `pace` how the client paces its writes against the
/// flushes and merges; the row records both (`sync` unless it is [`SyncMode::Never`]). Under [`Pace::Free`]
/// the sync mode sets the writer's speed, and with it what flushes and merges cost a write: a writer that
/// outruns the merges lets flushed runs queue and one merge take several of them, where a writer that fsyncs
/// every write gives each flush its own merge, as the model's rules assume (a development design measured
/// 5.6-6.1 blocks a write with [`SyncMode::Never`], 9.46 with [`SyncMode::Batch`]); [`Pace::Merged`] gives
/// each flush its own merge at any sync mode.
pub fn run_case_loads(
    c: &Case,
    i: usize,
    loads: usize,
    sync: SyncMode,
    pace: Pace,
) -> Result<Value> {
    let loads = loads.max(1);
    // A read-only cell is priced on the tree its load left, as the mean over loads ending within
    // `LOAD_SPREAD` of its records (where a load stops in its levels' fill cycles is not known to the model):
    // its loads are spread over that window, evenly, and the row holds their mean. Other cells' loads are
    // alike, and the row holds their median (their tree is the warm-up's).
    let w = &c.workload;
    let spread = loads > 1 && w.read_only();
    let mut runs = Vec::with_capacity(loads);
    for j in 0..loads {
        let tag = if loads == 1 {
            i.to_string()
        } else {
            format!("{i}-{j}")
        };
        let mut case = c.clone();
        if spread {
            let at = 2.0 * j as f64 / (loads - 1) as f64 - 1.0;
            case.workload.record_count =
                (w.record_count as f64 * (1.0 + LOAD_SPREAD * at)).round() as u64;
        }
        runs.push(measure(&case, &tag, sync, pace)?);
    }
    // each figure over the loads: their mean when spread, else their median
    let typical = |f: &dyn Fn(&Measured) -> Option<f64>| {
        let mut v: Vec<f64> = runs.iter().filter_map(|(m, _)| f(m)).collect();
        v.sort_by(f64::total_cmp);
        if spread {
            return (!v.is_empty()).then(|| v.iter().sum::<f64>() / v.len() as f64);
        }
        // (the mean of the middle two for an even count)
        (!v.is_empty()).then(|| (v[(v.len() - 1) / 2] + v[v.len() / 2]) / 2.0)
    };
    let mut order: Vec<usize> = (0..runs.len()).collect();
    order.sort_by(|&a, &b| runs[a].0.total.total_cmp(&runs[b].0.total));
    let (mid, tree) = &runs[order[(order.len() - 1) / 2]];
    let measured = Measured {
        total: typical(&|m| Some(m.total)).unwrap_or(mid.total),
        lookup: typical(&|m| m.lookup),
        scan: typical(&|m| m.scan),
        write: typical(&|m| m.write),
        ..*mid
    };
    let mut row = compare(c, &measured);
    if let Some(obj) = row.as_object_mut() {
        // the tree the run met at its end: runs and resident runs per level, the entries they hold, the
        // blocks its lookups read there and the lookups it answered (`found`); the lookups the buffers
        // answered beside it
        obj.insert("tree".into(), tree["levels"].clone());
        obj.insert("buffer_hits".into(), tree["buffer_hits"].clone());
        obj.insert(
            "slices".into(),
            slices_beside(c, &measured, &tree["slices"]),
        );
        if sync != SyncMode::Never {
            obj.insert("sync".into(), json!(sync.name()));
        }
        obj.insert("pace".into(), json!(pace.name()));
        if spread {
            obj.insert("loads_spread".into(), json!(LOAD_SPREAD));
        }
        if loads > 1 {
            obj.insert("loads".into(), json!(loads));
            obj.insert(
                "measured_range".into(),
                json!([runs[order[0]].0.total, runs[order[loads - 1]].0.total]),
            );
        }
    }
    Ok(row)
}

/// One load and run of a case in a directory named by `tag`: what it measured, and the tree it met at its end
/// (`levels`, and the lookups the buffers answered, `buffer_hits`).
fn measure(c: &Case, tag: &str, sync: SyncMode, pace: Pace) -> Result<(Measured, Value)> {
    let (design, w) = (&c.design, &c.workload);
    let dir = std::env::temp_dir().join(format!("cosine-validate-{}-{tag}", std::process::id()));
    let model = pace.model();
    // Warm up with the workload's own writes until the buffer has filled T + 1 times per merge into the last
    // level (T^{L−1}(T + 1) fills, at most 10 × the records): the buffer and the levels then hold what the
    // workload writes (the model's steady state), and the flush and compaction I/O, counted over warm-up and
    // run, samples merges into every level rather than only the cheap ones.
    let entry = (w.value_bytes() + 23) as f64;
    // (inserts grow the data: at most doubling it keeps the model's single N meaningful)
    let cap = if w.update + w.read_modify_write > 0.0 {
        10 * w.record_count
    } else {
        w.record_count
    };
    // the levels of the store the model prices, after the run's writes and after the most warm-up writes (a
    // design whose runs hold versions, an LSH log's, deepens with the writes it has seen)
    let write_share = w.insert + w.update + w.read_modify_write;
    let mut after_cap = w.to_model();
    if write_share > 0.0 {
        after_cap.operations = after_cap
            .operations
            .max((cap as f64 / write_share).ceil() as u64);
    }
    let levels = [w.to_model(), after_cap]
        .iter()
        .filter_map(|m| model.evaluate(design, m).ok())
        .map(|c| c.levels)
        .max()
        .unwrap_or(1)
        .max(1);
    // (a one-level tree, an LSH log among them, is pushed down once it holds its T − 1 runs: its whole cycle;
    // deeper trees sample a capped share of theirs)
    let t = if levels <= 1 {
        design.size_ratio as f64
    } else {
        design.size_ratio.min(64) as f64
    };
    let fills = t.powi(levels as i32 - 1) * (t + 1.0);
    let warm_up = ((fills * design.buffer_bytes as f64 / entry).ceil() as u64).min(cap);
    let r = run_bench(
        design,
        w,
        &dir,
        RunSpec {
            threads: c.threads,
            sync,
            seed: 11,
            warm_up_writes: warm_up,
            slices: VALIDATE_SLICES,
            pace: pace_of(design, w, pace),
            progress: &NoProgress,
        },
    );
    let _ = std::fs::remove_dir_all(&dir);
    let r = r?;
    let per_write = r.background_per_write.filter(|_| r.run_writes > 0);
    let measured = Measured {
        total: r.run.read_ios_per_op.unwrap_or(0.0)
            + per_write.unwrap_or(0.0) * r.run_writes as f64 / r.run.operations.max(1) as f64,
        lookup: r
            .run
            .ops
            .iter()
            .find(|(n, _)| n == "read")
            .and_then(|(_, o)| o.read_ios),
        scan: r
            .run
            .ops
            .iter()
            .find(|(n, _)| n == "scan")
            .and_then(|(_, o)| o.read_ios),
        write: per_write,
        warm_up_writes: warm_up,
        run_writes: r.run_writes,
        run_inserted: r.run.inserted,
        pace,
    };
    let tree: Value = r
        .stats
        .levels
        .iter()
        .map(|l| {
            json!({
                "level": l.level, "runs": l.runs, "resident_runs": l.resident_runs, "entries": l.entries,
                "block_reads": l.io.block_reads, "index_reads": l.io.index_reads, "found": l.io.found,
                "filter_probes": l.io.filter_probes, "filter_negatives": l.io.filter_negatives,
                "block_writes": l.io.block_writes, "compaction_reads": l.io.compaction_reads,
            })
        })
        .collect::<Vec<_>>()
        .into();
    // the lookups the buffers answered: the run's lookups (reads and read-modify-writes; every key read
    // exists) less those the runs and the entry cache answered (the engine keeps no counter on that path)
    let lookups: u64 = r
        .run
        .ops
        .iter()
        .filter(|(n, _)| n == "read" || n == "rmw")
        .map(|(_, o)| o.count)
        .sum();
    let found: u64 = r.stats.levels.iter().map(|l| l.io.found).sum();
    let buffer_hits = lookups.saturating_sub(found + r.stats.cache.hits);
    let slices: Vec<Value> = r
        .slices
        .iter()
        .map(|s| {
            json!({
                "writes_before": s.writes_before, "lookup": s.lookup, "scan": s.scan,
                "tree": s.levels.iter().map(|&(runs, resident, entries)| json!([runs, resident, entries]))
                    .collect::<Vec<_>>(),
            })
        })
        .collect();
    let tree = json!({ "levels": tree, "buffer_hits": buffer_hits, "slices": slices });
    Ok((measured, tree))
}

/// What one engine run of a case measured, as [`compare`] needs it.
#[derive(Clone, Copy, Debug)]
pub struct Measured {
    /// I/Os per operation in all.
    pub total: f64,
    /// Read-path blocks per lookup, if the run looked up.
    pub lookup: Option<f64>,
    /// Read-path blocks per scan, if the run scanned.
    pub scan: Option<f64>,
    /// Flush and compaction blocks per write over warm-up and run, if the run wrote.
    pub write: Option<f64>,
    /// Unmeasured writes between load and run.
    pub warm_up_writes: u64,
    /// Writes in the measured run.
    pub run_writes: u64,
    /// Records the measured run inserted.
    pub run_inserted: u64,
    /// How the client paced its writes: what the model is asked to price (a merged pace meets the phase of
    /// the merge cycles the planner's simulation gives; a free one, a phase the model prices by its mean).
    pub pace: Pace,
}

/// The store after `done` of the warm-up's and the run's writes of `w`: the load's records and the inserts so
/// far, and the writes it has seen (an LSH design's runs, the versions a tiered level keeps, grow with them).
fn store_after(w: &cosine_ycsb::CoreWorkload, done: f64) -> cosine_design::Workload {
    let write_share = w.insert + w.update + w.read_modify_write;
    let inserted = if write_share > 0.0 {
        (done * w.insert / write_share) as u64
    } else {
        0
    };
    let mut at = w.to_model_over(w.record_count + inserted);
    if write_share > 0.0 {
        at.operations = (done / write_share) as u64;
    }
    at
}

/// The model's price of the store each measured slice met, in order: the slices ran spread over the second
/// half of the warm-up with the run's own writes going on between them, so the model is asked about the store
/// each slice met (its predictions are averaged as the measurement averages the slices).
fn slice_costs(c: &Case, m: &Measured) -> Vec<cosine_cost_model::IoCost> {
    let model = m.pace.model();
    slice_stores(c, m)
        .iter()
        .filter_map(|slice| model.evaluate(&c.design, slice).ok())
        .collect()
}

/// The store each measured slice met, as [`slice_costs`] prices it: the slice's own operations after all
/// those before it (the store passes through the states its writes make while it runs).
fn slice_stores(c: &Case, m: &Measured) -> Vec<cosine_design::Workload> {
    let w = &c.workload;
    let warm_up = m.warm_up_writes as f64;
    let write_share = w.insert + w.update + w.read_modify_write;
    (0..VALIDATE_SLICES)
        .map(|i| {
            let half = warm_up / 2.0;
            // (the warm-up's writes up to this slice, and the run's up to its end: the slice's own writes
            // are the last `own` operations' before it)
            let f = (i as f64 + 1.0) / VALIDATE_SLICES as f64;
            let mut slice = store_after(w, half + half * f + m.run_writes as f64 * f);
            if write_share > 0.0 {
                let own =
                    (m.run_writes as f64 / VALIDATE_SLICES as f64 / write_share).round() as u64;
                let own = own.clamp(1, slice.operations.max(1));
                slice.operations_before = slice.operations - own;
                slice.operations = own;
            }
            slice
        })
        .collect()
}

/// The slices one load measured (`slices`: each with `writes_before`, `lookup`, `scan` and the engine's
/// `tree` at its end, as `[runs, resident runs, entries]` per level), each beside the model's price of the
/// store it met and the model's tree there: where in the merge cycle a model and an engine part.
fn slices_beside(c: &Case, m: &Measured, slices: &Value) -> Value {
    let Some(slices) = slices.as_array() else {
        return Value::Null;
    };
    let model = m.pace.model();
    let stores = slice_stores(c, m);
    if slices.len() != stores.len() {
        // (a run of fewer operations than slices ran fewer slices than the model's points)
        return Value::Null;
    }
    // (a row's slices as a run measured them, or as a report holds them beside an earlier price)
    let measured = |v: &Value| match v.get("measured") {
        Some(m) => m.clone(),
        None => v.clone(),
    };
    slices
        .iter()
        .zip(&stores)
        .map(|(s, store)| {
            let cost = model.evaluate(&c.design, store).ok();
            let model_tree = model.explain(&c.design, store).ok().flatten();
            json!({
                "writes_before": s["writes_before"],
                "lookup": {
                    "measured": measured(&s["lookup"]),
                    "predicted": cost.as_ref().map(|c| c.per_op.lookup),
                },
                "scan": {"measured": measured(&s["scan"]), "predicted": cost.as_ref().map(|c| c.scan)},
                "tree": s["tree"],
                "model_tree": model_tree,
            })
        })
        .collect::<Vec<_>>()
        .into()
}

/// The model's prediction for a case beside what the engine measured: one row of the report (label, class,
/// workload, threads, design, predicted, measured, accuracy, and the same per operation type).
pub fn compare(c: &Case, m: &Measured) -> Value {
    let (design, w) = (&c.design, &c.workload);
    let model = m.pace.model();
    let warm_up = m.warm_up_writes as f64;
    let write_share = w.insert + w.update + w.read_modify_write;
    let at = |done: f64| store_after(w, done);
    let costs = slice_costs(c, m);
    // the flush and compaction part of an operation's price (a write's, and a read-modify-write's write)
    let write_part = |c: &cosine_cost_model::IoCost| {
        w.insert * c.per_op.insert + (w.update + w.read_modify_write) * c.per_op.blind_update
    };
    // flushes and compactions are counted over the whole warm-up and run, so their prediction is the mean
    // over stretches that tile all of it: each stretch priced as its own writes after those before it
    // (`operations_before`: the model's write price is a mean over the writes it is asked about, and the
    // store's state that after them), inserts growing the data from the load's records on
    // (the model takes the store's state at a stretch's end, so the stretches are short: the state's bias
    // is half a stretch, 1/64 of the writes)
    const STRETCHES: usize = 32;
    let all_writes = warm_up + m.run_writes as f64;
    let write_costs: Vec<f64> = (0..STRETCHES)
        .filter_map(|i| {
            let from = all_writes * i as f64 / STRETCHES as f64;
            let to = all_writes * (i as f64 + 1.0) / STRETCHES as f64;
            let mut stretch = at(to);
            if write_share > 0.0 {
                stretch.operations_before = (from / write_share).round() as u64;
                stretch.operations = ((to - from) / write_share).round().max(1.0) as u64;
            }
            let c = model.evaluate(design, &stretch).ok()?;
            (write_share > 0.0).then(|| write_part(&c) / write_share)
        })
        .collect();
    let write_mean = (!write_costs.is_empty())
        .then(|| write_costs.iter().sum::<f64>() / write_costs.len() as f64);
    let mean = |f: &dyn Fn(&cosine_cost_model::IoCost) -> f64| {
        (!costs.is_empty()).then(|| costs.iter().map(f).sum::<f64>() / costs.len() as f64)
    };
    let cost = costs.first();
    // the tree the model prices at the run's end, beside the engine's tree at the run's end
    let model_tree = model
        .explain(design, &at(warm_up + m.run_writes as f64))
        .ok()
        .flatten();
    // in all: the read path at the stores the slices met, and the writes' flushes and compactions as they
    // are measured, over all the writes (the engine's total adds its background I/O per write the same way)
    let predicted = match write_mean {
        Some(per_write) => {
            mean(&|c| c.per_operation - write_part(c)).map(|reads| reads + per_write * write_share)
        }
        None => mean(&|c| c.per_operation),
    }
    .unwrap_or(f64::NAN);
    // the same comparison per operation type: read-path blocks of reads and scans, and the flush and
    // compaction I/O per write
    let predicted_write = write_mean.filter(|_| m.write.is_some());
    let class = cost
        .as_ref()
        .map_or("?".to_string(), |c| c.class.to_string());
    let pair = |p: Option<f64>, m: Option<f64>| match (p, m) {
        (Some(p), Some(m)) => json!({"predicted": p, "measured": m, "accuracy": accuracy(p, m)}),
        _ => json!({"predicted": null, "measured": m}),
    };
    json!({
        "label": c.label, "class": class, "workload": w.name, "records": w.record_count,
        "memory": design.memory_bytes(), "threads": c.threads,
        "design": design, "predicted": predicted, "measured": m.total,
        "accuracy": accuracy(predicted, m.total), "overestimated": predicted >= m.total,
        "warm_up_writes": m.warm_up_writes, "run_writes": m.run_writes, "run_inserted": m.run_inserted,
        "lookup": pair(mean(&|c| c.per_op.lookup).filter(|_| m.lookup.is_some()), m.lookup),
        "scan": pair(mean(&|c| c.scan).filter(|_| m.scan.is_some()), m.scan),
        "write": pair(predicted_write, m.write),
        "model_tree": model_tree,
    })
}

/// Prices the cases of a saved report (`cosine validate --json`) again with the current model, keeping what the
/// engine measured: a model change is checked against every cell in seconds, without running the engine.
/// Rows saved before they carried the run's writes and inserts take them from the workload's shares of its
/// operations.
pub fn rescore(report: &Value) -> Result<Vec<Value>> {
    let rows = report["rows"]
        .as_array()
        .ok_or_else(|| Error::Invalid("a validate report has rows".into()))?;
    let ops = report["ops"].as_u64().unwrap_or(0);
    rows.iter()
        .map(|r| {
            let field = |name: &str| {
                r.get(name)
                    .ok_or_else(|| Error::Invalid(format!("a report row without {name}")))
            };
            let design: cosine_design::Design = serde_json::from_value(field("design")?.clone())
                .map_err(|e| Error::Invalid(format!("a report row's design: {e}")))?;
            design.validate()?;
            let name = field("workload")?.as_str().unwrap_or_default();
            // `--uniform` variants are named <workload>-uniform
            let base = name.strip_suffix("-uniform");
            let mut w = cosine_ycsb::CoreWorkload::named(base.unwrap_or(name))
                .ok_or_else(|| Error::Invalid(format!("a report row's workload {name}")))?;
            if base.is_some() {
                w.distribution = cosine_ycsb::Distribution::Uniform;
                w.name = name.to_string();
            }
            w.record_count = field("records")?.as_u64().unwrap_or(0);
            w.operation_count = ops;
            let writes = w.update + w.insert + w.read_modify_write;
            let count = |name: &str, share: f64| {
                r.get(name)
                    .and_then(Value::as_u64)
                    .unwrap_or((ops as f64 * share).round() as u64)
            };
            let measured = Measured {
                total: field("measured")?.as_f64().unwrap_or(f64::NAN),
                lookup: r["lookup"]["measured"].as_f64(),
                scan: r["scan"]["measured"].as_f64(),
                write: r["write"]["measured"].as_f64(),
                warm_up_writes: field("warm_up_writes")?.as_u64().unwrap_or(0),
                run_writes: count("run_writes", writes),
                run_inserted: count("run_inserted", w.insert),
                pace: Pace::named(r.get("pace").and_then(Value::as_str)),
            };
            let case = Case {
                label: field("label")?.as_str().unwrap_or_default().to_string(),
                design,
                workload: w,
                threads: field("threads")?.as_u64().unwrap_or(1) as usize,
            };
            let mut row = compare(&case, &measured);
            if let Some(obj) = row.as_object_mut() {
                // what the run measured beyond the figures priced: the tree, and the loads and their range
                for name in ["tree", "buffer_hits", "loads", "measured_range"] {
                    if let Some(v) = r.get(name) {
                        obj.insert(name.into(), v.clone());
                    }
                }
                if let Some(slices) = r.get("slices") {
                    obj.insert("slices".into(), slices_beside(&case, &measured, slices));
                }
            }
            Ok(row)
        })
        .collect()
}

/// Mean and worst accuracy per class, in total and per operation type, over report rows.
pub fn summary(rows: &[Value]) -> Value {
    let mut out = serde_json::Map::new();
    let mut classes: Vec<String> = rows
        .iter()
        .filter_map(|r| r["class"].as_str().map(str::to_string))
        .collect();
    classes.sort();
    classes.dedup();
    for c in classes {
        let mine: Vec<&Value> = rows.iter().filter(|r| r["class"] == c.as_str()).collect();
        let stats = |get: &dyn Fn(&Value) -> Option<f64>| {
            let v: Vec<f64> = mine
                .iter()
                .filter_map(|r| get(r))
                .filter(|x| x.is_finite())
                .map(|x| x.max(0.0))
                .collect();
            if v.is_empty() {
                return json!(null);
            }
            let worst = v.iter().copied().fold(f64::INFINITY, f64::min);
            json!({"mean": v.iter().sum::<f64>() / v.len() as f64, "worst": worst, "cells": v.len()})
        };
        out.insert(
            c.clone(),
            json!({
                "total": stats(&|r| r["accuracy"].as_f64()),
                "lookup": stats(&|r| r["lookup"]["accuracy"].as_f64()),
                "scan": stats(&|r| r["scan"]["accuracy"].as_f64()),
                "write": stats(&|r| r["write"]["accuracy"].as_f64()),
            }),
        );
    }
    Value::Object(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cases::{cases, CaseSpec};
    use cosine_cost_model::DistributionAware;
    use cosine_design::DesignClass;

    /// The engine runs of these tests, one at a time: the case with writes measures flush and compaction blocks
    /// a write, which move when another engine loads beside it (median total accuracy 0.88-0.90 against its
    /// 0.9 bound in four runs side by side, above it alone).
    static ENGINE_RUNS: std::sync::Mutex<()> = std::sync::Mutex::new(());
    use cosine_ycsb::CoreWorkload;

    #[test]
    fn accuracy_is_one_minus_the_relative_error() {
        assert_eq!(accuracy(1.0, 1.0), 1.0);
        assert!((accuracy(1.5, 2.0) - 0.75).abs() < 1e-12);
        assert!((accuracy(3.0, 1.0) + 1.0).abs() < 1e-12);
        assert!(accuracy(1.0, 0.0).is_nan());
    }

    /// A small fixed case, run for real: the LSM design's point lookups on a read-only workload cost one block
    /// each in the engine and in the model (the bound fails on a regression in either).
    #[test]
    fn a_small_fixed_case_is_predicted_within_its_bound() {
        let spec = CaseSpec {
            designs: Vec::new(),
            records: 3000,
            memory: 1 << 20,
            held_out: false,
            random: 0,
            seed: 1,
            threads: vec![1],
            classes: vec![DesignClass::Lsm],
        };
        let all = cases(&spec, |records| {
            let mut w = CoreWorkload::named("ycsb-c").unwrap();
            w.record_count = records;
            w.operation_count = 1000;
            Ok(vec![w])
        })
        .unwrap();
        assert_eq!(all.len(), 1);
        let _one_at_a_time = ENGINE_RUNS.lock().unwrap_or_else(|e| e.into_inner());
        let row = run_case(&all[0], 0).unwrap();
        let a = row["accuracy"].as_f64().unwrap();
        assert!(a >= 0.95, "{row}");
        assert_eq!(row["class"], "lsm");
        let s = summary(&[row]);
        assert!(s["lsm"]["total"]["mean"].as_f64().unwrap() >= 0.95);
        assert_eq!(s["lsm"]["total"]["cells"], 1);
    }

    /// A read-only cell over several loads: its loads end spread over the window the model averages a load's
    /// end over (`LOAD_SPREAD` of its records either side), and the row says so and holds their mean.
    #[test]
    fn a_read_only_cell_s_loads_spread_over_the_model_s_window() {
        let mut design = cosine_design::Design::rocksdb_like(200_000, 20_000, 60_000);
        design.block_bytes = 4096;
        design.size_ratio = 4;
        let case = Case::one_thread("spread", design, "ycsb-c", 2000, 500).unwrap();
        let _one_at_a_time = ENGINE_RUNS.lock().unwrap_or_else(|e| e.into_inner());
        let row = run_case_loads(&case, 9, 3, SyncMode::Never, Pace::Merged).unwrap();
        assert_eq!(row["loads_spread"], json!(LOAD_SPREAD));
        assert_eq!(row["loads"], 3);
        let (lo, hi) = (
            row["measured_range"][0].as_f64().unwrap(),
            row["measured_range"][1].as_f64().unwrap(),
        );
        let m = row["measured"].as_f64().unwrap();
        assert!(lo <= m && m <= hi, "{row}");
        // the model is asked about the cell's own records, not a spread load's
        assert_eq!(row["records"], 2000);
    }

    /// A small fixed case with writes, run for real: the LSM design under YCSB-A's zipfian updates, whose flush
    /// and compaction blocks per write the model prices level by level as the planner merges (3.9 predicted
    /// against 4.0 measured here; Table 2's arithmetic, which lets every level fill from empty, priced less).
    #[test]
    fn a_small_fixed_case_with_writes_is_predicted_within_its_bound() {
        let spec = CaseSpec {
            designs: Vec::new(),
            records: 3000,
            memory: 1 << 20,
            held_out: false,
            random: 0,
            seed: 1,
            threads: vec![1],
            classes: vec![DesignClass::Lsm],
        };
        let all = cases(&spec, |records| {
            let mut w = CoreWorkload::named("ycsb-a").unwrap();
            w.record_count = records;
            w.operation_count = 1000;
            Ok(vec![w])
        })
        .unwrap();
        // One run: the client waits for the merges every quarter of a flush (`cosine validate`'s pace), so each flush
        // gets its own merge and three loads measure the same figures (4.14 blocks a write against 3.88
        // priced, 2.49 I/Os an operation against 2.39, on 2026-11-27). A writer free of the merges measured
        // 3.4-4.0 blocks a write from run to run, and this test took the median of three.
        let _one_at_a_time = ENGINE_RUNS.lock().unwrap_or_else(|e| e.into_inner());
        let row = run_case(&all[0], 1).unwrap();
        let write = row["write"]["accuracy"].as_f64().unwrap();
        let total = row["accuracy"].as_f64().unwrap();
        assert!(write >= 0.9 && total >= 0.9, "{write}, {total}: {row}");
        // rescoring the saved row prices it alike
        let report = json!({"ops": 1000, "rows": [row.clone()]});
        let again = rescore(&report).unwrap();
        assert!(
            (again[0]["predicted"].as_f64().unwrap() - row["predicted"].as_f64().unwrap()).abs()
                < 1e-12
        );
        assert_eq!(again[0]["write"]["measured"], row["write"]["measured"]);
    }

    /// A hybrid design of 600 KB of buffer at size ratio `t` (K = 1, Z = T − 1, full merges on its first two
    /// levels, merge threshold `theta`) on YCSB-A over 3,000 records: its first level holds nearly every key.
    fn hybrid_case(label: &str, t: u64, theta: f64) -> Case {
        let mut design = cosine_design::Design::rocksdb_like(600_000, 30_000, 40_000);
        design.block_bytes = 4096;
        design.size_ratio = t;
        design.hot_runs = 1;
        design.cold_runs = t - 1;
        design.merge_threshold = theta;
        design.compaction = cosine_design::Compaction::Hybrid;
        design.full_compaction_levels = 2;
        design.class = Some(DesignClass::Hybrid);
        Case::one_thread(label, design, "ycsb-a", 3000, 1000).unwrap()
    }

    #[test]
    fn a_first_level_its_keys_cannot_fill_is_priced_as_holding_them() {
        // A hybrid design whose first level holds 32 flushes, more than the 3,000 keys (the pattern of the
        // search's 2-8 MiB hybrid picks on the development sets): under YCSB-A's updates the engine's level 1
        // keeps nearly every key and answers the lookups. The model priced it half full above a level of
        // versions until c34ac37 (about 1.3 blocks a lookup against about 0.9); the same row priced with those
        // fixes switched off must miss the bound this one meets, so the test fails if they are undone.
        let case = hybrid_case("first level never full", 32, 1.0);
        let _one_at_a_time = ENGINE_RUNS.lock().unwrap_or_else(|e| e.into_inner());
        // (one run, paced: 0.84-0.85 blocks a lookup against 0.85 priced, 3.76 blocks a write against 3.87; a
        // free writer measured 0.97 blocks a lookup in some runs, and this test took the median of three)
        let row = run_case(&case, 4).unwrap();
        let lookup = row["lookup"]["accuracy"].as_f64().unwrap();
        assert!(lookup >= 0.9, "{row}");
        let quirked = DistributionAware {
            quirks: cosine_cost_model::ReferenceQuirks {
                levels_always_fill: true,
                entries_as_writes: true,
                last_hot_level_holds_z: true,
                ..cosine_cost_model::ReferenceQuirks::NONE
            },
            ..Default::default()
        };
        let mut at = case.workload.to_model();
        at.operations = (row["warm_up_writes"].as_f64().unwrap() / 0.5) as u64;
        let before = quirked.evaluate(&case.design, &at).unwrap().per_op.lookup;
        let measured = row["lookup"]["measured"].as_f64().unwrap();
        assert!(
            accuracy(before, measured) < 0.5,
            "{before} priced without the fixes against {measured}: {row}"
        );
    }

    /// The writes of a hybrid design whose first level its keys nearly fill (the search's 4 MiB/30k YCSB-A
    /// pick at test scale): each flush merged into a level of all the keys costs the design's price when every
    /// flush gets its own merge, the pace `cosine validate` runs at; a writer free of the merges lets one merge
    /// take several flushed runs and write less (how much less depends on the two speeds: bounded one way).
    #[test]
    fn a_paced_writer_gives_each_flush_its_own_merge() {
        let case = hybrid_case("hybrid, level 1 of all the keys", 24, 0.75);
        let _one_at_a_time = ENGINE_RUNS.lock().unwrap_or_else(|e| e.into_inner());
        let paced = run_case_loads(&case, 7, 1, SyncMode::Never, Pace::Merged).unwrap();
        let free = run_case_loads(&case, 8, 1, SyncMode::Never, Pace::Free).unwrap();
        assert_eq!(
            (&paced["pace"], &free["pace"]),
            (&json!("merged"), &json!("free"))
        );
        let write = paced["write"]["accuracy"].as_f64().unwrap();
        assert!(write >= 0.9, "{paced}");
        // a merge that takes several flushed runs writes their level once for all of them: never more than
        // one merge a flush (4.43 blocks a write paced, 3.47 free on 2026-11-27)
        let measured = |r: &Value| r["write"]["measured"].as_f64().unwrap();
        assert!(measured(&free) <= 1.1 * measured(&paced), "{paced}\n{free}");
    }
}

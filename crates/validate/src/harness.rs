//! Running the engine under the YCSB harness: load, settle, warm-up and measured slices.

use crate::{Error, Result};
use cosine_cost_model::cpu::PhiLibrary;
use cosine_design::{Design, DesignClass};
use cosine_engine::{Engine, Options, SyncMode};
use cosine_ycsb::{run_phase, CoreWorkload, CosineStore, PhaseReport, Store};
use std::sync::atomic::AtomicU64;
use std::sync::Arc;

/// Shows a phase's progress while it runs: `phase` runs `run`, handing it a counter of operations done (or
/// none) to draw from.
pub trait Progress: Sync {
    /// Runs one phase of `total` operations named `label`.
    fn phase(
        &self,
        label: &str,
        total: u64,
        run: &mut dyn FnMut(Option<&AtomicU64>) -> PhaseReport,
    ) -> PhaseReport;
}

/// Shows nothing.
pub struct NoProgress;

impl Progress for NoProgress {
    fn phase(
        &self,
        _label: &str,
        _total: u64,
        run: &mut dyn FnMut(Option<&AtomicU64>) -> PhaseReport,
    ) -> PhaseReport {
        run(None)
    }
}

/// The design Cosine's search picks for a workload on one machine with `memory` bytes for the engine.
pub fn searched_design(w: &CoreWorkload, memory: u64, phi: &PhiLibrary) -> Result<Design> {
    let cores = std::thread::available_parallelism()
        .map(|n| n.get() as u32)
        .unwrap_or(1);
    cosine_search::designs::best_for_machine(&w.to_model(), memory, cores, phi)
        .ok_or(Error::NoDesign(memory))
}

/// What one engine run measured.
pub struct Run {
    /// The load phase.
    pub load: PhaseReport,
    /// The measured run (its slices folded together).
    pub run: PhaseReport,
    /// The engine's counters and shape at the end.
    pub stats: cosine_engine::Stats,
    /// Resident bytes at the end.
    pub rss: Option<u64>,
    /// Peak resident bytes of the process over load and run.
    pub peak_rss: Option<u64>,
    /// Flush and compaction I/Os per write over the warm-up and the run.
    pub background_per_write: Option<f64>,
    /// Writes (updates, inserts, read-modify-writes) in the run.
    pub run_writes: u64,
    /// The engine's counters once the load was settled (before any warm-up and the measured run).
    pub before_run: cosine_engine::Stats,
    /// Seconds the settle after the run took (flushing and merging what the run wrote).
    pub settle_seconds: f64,
    /// Each measured slice on its own, in order: what its lookups and scans read, and the tree it ended on.
    pub slices: Vec<Slice>,
}

/// One measured slice of a run: where in the warm-up it ran, what its lookups and scans read, and the
/// engine's tree at its end, so a model's price of the store at that point can be set beside it.
#[derive(Clone, Debug)]
pub struct Slice {
    /// Writes (warm-up and measured) made before the slice began.
    pub writes_before: u64,
    /// Read-path blocks per lookup in the slice, if it looked up.
    pub lookup: Option<f64>,
    /// Read-path blocks per scan in the slice, if it scanned.
    pub scan: Option<f64>,
    /// Per level, top first: (runs, runs resident, entries) at the slice's end.
    pub levels: Vec<(usize, usize, u64)>,
}

/// How one engine run is driven.
pub struct RunSpec<'a> {
    /// Client threads.
    pub threads: usize,
    /// The engine's sync mode.
    pub sync: SyncMode,
    /// Seed of the request generators.
    pub seed: u64,
    /// Unmeasured writes of the workload between load and run (validate's steady state).
    pub warm_up_writes: u64,
    /// Slices the warm-up and the run are cut into and interleaved (warm-up slice, run slice, ...), so that
    /// the measured operations meet the tree at that many points of its merge cycle rather than one.
    pub slices: u64,
    /// Writes the client makes at most between two waits for the engine's background work (flushes and
    /// merges) to finish, in the load, the warm-up and the run: with at most half a flush's entries, each
    /// flush is merged before the next one is made, the tree keeps its design's shape, as the cost model
    /// prices it. `None`: the client runs free, and a writer that outruns the merges lets one merge take
    /// several flushed runs (fewer block writes a write, more runs to probe meanwhile). Paced, a phase's
    /// `seconds` leave out the waits (and the merges done in them), and two client threads meet at every
    /// part's end: a paced run counts I/O, it is not a timing or a concurrency test.
    pub pace: Option<u64>,
    /// Shows each phase's progress (a bar, in the CLI).
    pub progress: &'a dyn Progress,
}

/// Fails on a phase in which the engine returned a wrong result (every read and scan is checked).
fn wrong_results(r: &PhaseReport) -> Result<()> {
    match &r.first_wrong {
        Some(why) => Err(Error::WrongResults {
            count: r.wrong,
            first: why.clone(),
        }),
        None => Ok(()),
    }
}

/// The client of [`run_bench`]: runs a phase whole, or in parts of at most `pace` writes each followed by a
/// wait for the engine's flushes and merges.
struct Paced<'a> {
    engine: &'a Arc<Engine>,
    store: &'a CosineStore,
    ledger: &'a cosine_ycsb::Ledger,
    threads: usize,
    pace: Option<u64>,
    /// A wait for the background work that failed (the engine's error), for [`Paced::checked`].
    failed: std::cell::RefCell<Option<Error>>,
}

impl Paced<'_> {
    /// Runs phase `w` (its load when `load`): whole, or in parts of at most `pace` writes (records of a load,
    /// else operations holding that many writes on average), waiting for the background work after each.
    /// A wait that fails ends the phase; [`Paced::checked`] returns its error.
    fn phase(
        &self,
        w: &CoreWorkload,
        load: bool,
        seed: u64,
        progress: Option<&AtomicU64>,
    ) -> PhaseReport {
        let run = |part: &CoreWorkload, seed: u64| {
            run_phase(
                self.store,
                self.ledger,
                part,
                self.threads,
                load,
                seed,
                progress,
            )
        };
        let Some(pace) = self.pace else {
            return run(w, seed);
        };
        let writes = if load {
            1.0
        } else {
            w.update + w.insert + w.read_modify_write
        };
        // operations a part holds: `pace` writes on average (a phase without writes is one part)
        let per_part = if writes > 0.0 {
            ((pace.max(1) as f64 / writes).floor() as u64).max(1)
        } else {
            u64::MAX
        };
        let end = if load {
            w.record_count
        } else {
            w.operation_count
        };
        // the part from `at` on: its records of the load, or its operations, after the inserts before it
        let mut part = w.clone();
        let bound = |part: &mut CoreWorkload, at: u64, inserted: u64| {
            let to = end.min(at.saturating_add(per_part));
            if load {
                (part.loaded_before, part.record_count) = (at, to);
            } else {
                part.operation_count = to - at;
                part.inserted_before = w.inserted_before + inserted;
            }
            to
        };
        let first = if load { w.loaded_before } else { 0 };
        let mut to = bound(&mut part, first, 0);
        let mut all = run(&part, seed);
        for n in 1u64.. {
            if let Err(e) = self.engine.wait_for_compactions() {
                *self.failed.borrow_mut() = Some(e.into());
                break;
            }
            if to >= end || all.wrong > 0 {
                break;
            }
            to = bound(&mut part, to, all.inserted);
            // each part its own request stream (the same seed would repeat the first part's keys)
            all.absorb(run(
                &part,
                seed.wrapping_add(n.wrapping_mul(0x9E37_79B9_7F4A_7C15)),
            ));
        }
        all
    }

    /// A phase's report, failing on a failed wait or a wrong result.
    fn checked(&self, r: PhaseReport) -> Result<PhaseReport> {
        if let Some(e) = self.failed.borrow_mut().take() {
            return Err(e);
        }
        wrong_results(&r)?;
        Ok(r)
    }
}

/// The writes (updates, inserts, read-modify-writes) a phase made.
fn written(r: &PhaseReport) -> u64 {
    r.ops
        .iter()
        .filter(|(n, _)| n == "update" || n == "insert" || n == "rmw")
        .map(|(_, o)| o.count)
        .sum()
}

/// Loads `w` into a fresh engine of `design` in `dir`, settles it, then runs the warm-up and the measured
/// operations in interleaved slices; every read and scan is checked against what was written.
pub fn run_bench(
    design: &Design,
    w: &CoreWorkload,
    dir: &std::path::Path,
    spec: RunSpec<'_>,
) -> Result<Run> {
    let RunSpec {
        threads,
        sync,
        seed,
        warm_up_writes,
        slices,
        pace,
        progress,
    } = spec;
    let engine = Arc::new(Engine::open_with(dir, design, Options::with_sync(sync))?);
    let store = CosineStore(engine.clone());
    let ledger = cosine_ycsb::Ledger::default();
    let paced = Paced {
        engine: &engine,
        store: &store,
        ledger: &ledger,
        threads,
        pace,
        failed: Default::default(),
    };
    let load = progress.phase("load", w.record_count, &mut |p| {
        paced.phase(w, true, seed, p)
    });
    let load = paced.checked(load)?;
    store.settle()?;
    let before = store.io();
    let before_run = engine.stats();
    let mut measured = w.clone();
    let writes = w.update + w.insert + w.read_modify_write;
    let slices = slices.clamp(1, w.operation_count.max(1));
    let mut run: Option<PhaseReport> = None;
    let mut slice_reports = Vec::with_capacity(slices as usize);
    let mut writes_done = 0u64;
    // half the warm-up before the first slice, the other half spread between the slices
    let spread = if slices > 1 { warm_up_writes / 2 } else { 0 };
    for i in 0..slices {
        let share = |total: u64| total / slices + u64::from(i < total % slices);
        let warm_writes = share(spread) + if i == 0 { warm_up_writes - spread } else { 0 };
        if warm_writes > 0 && writes > 0.0 {
            // the workload's writes alone (reads do not change the tree), unmeasured, so that the buffer and
            // the upper levels hold what the workload itself writes (the model's steady state), not the
            // load's tail
            let mut warm = measured.clone();
            (warm.read, warm.scan, warm.read_modify_write) = (0.0, 0.0, 0.0);
            warm.update = (w.update + w.read_modify_write) / writes;
            warm.insert = w.insert / writes;
            warm.operation_count = warm_writes;
            let r = paced.checked(paced.phase(&warm, false, seed + 2 + 10 * i, None))?;
            measured.inserted_before += r.inserted;
            writes_done += warm_writes;
            // a free warm-up writes as fast as it can, unlike the workload it stands for: let compaction
            // catch up (the active buffer stays as it is), so a slice meets the design's shape, not a backlog
            // of level-1 runs that the run's own write rate would not have left (a paced one has waited)
            if pace.is_none() {
                engine.wait_for_compactions()?;
            }
        }
        let mut slice = measured.clone();
        slice.operation_count = share(w.operation_count);
        let label = if slices > 1 {
            format!("run {}/{slices}", i + 1)
        } else {
            "run".into()
        };
        let r = progress.phase(&label, slice.operation_count, &mut |p| {
            paced.phase(&slice, false, seed + 1 + 10 * i, p)
        });
        let r = paced.checked(r)?;
        measured.inserted_before += r.inserted;
        let per_type = |name: &str| {
            r.ops
                .iter()
                .find(|(n, _)| n == name)
                .and_then(|(_, o)| o.read_ios)
        };
        slice_reports.push(Slice {
            writes_before: writes_done,
            lookup: per_type("read"),
            scan: per_type("scan"),
            levels: engine
                .stats()
                .levels
                .iter()
                .map(|l| (l.runs, l.resident_runs, l.entries))
                .collect(),
        });
        writes_done += written(&r);
        match &mut run {
            Some(all) => all.absorb(r),
            None => run = Some(r),
        }
    }
    let run = run.ok_or_else(|| Error::Invalid("the run has no operations".into()))?;
    // flush and compaction I/O per write over the warm-up and the run together, including the compactions
    // still owed at the end (settled): a writer that outruns compaction defers merges, it does not avoid them
    let settle_started = std::time::Instant::now();
    store.settle()?;
    let settle_seconds = settle_started.elapsed().as_secs_f64();
    let run_writes = written(&run);
    let background_per_write = match (before, store.io()) {
        (Some(a), Some(b)) if warm_up_writes + run_writes > 0 => {
            Some((b.background - a.background) as f64 / (warm_up_writes + run_writes) as f64)
        }
        _ => None,
    };
    let stats = engine.stats();
    Ok(Run {
        load,
        run,
        background_per_write,
        run_writes,
        before_run,
        settle_seconds,
        slices: slice_reports,
        stats,
        rss: cosine_ycsb::resident_bytes(),
        peak_rss: cosine_ycsb::peak_resident_bytes(),
    })
}

/// The four fixed class designs at `memory` bytes (buffer, filters and fences together): an LSM-tree, a
/// B-tree-like layout, an LSH and a hybrid, as `cosine validate` and `cosine calibrate` use them.
pub fn class_designs(memory: u64) -> Vec<(DesignClass, Design)> {
    let mut lsm = Design::rocksdb_like(memory / 4, memory / 4, memory / 2);
    lsm.block_bytes = 4096;
    lsm.file_bytes = 4 << 20;
    let mut btree = Design::wiredtiger_like(memory / 2, memory / 64);
    btree.block_bytes = 32 * 1024;
    btree.size_ratio = 16;
    let lsh = Design::lsh_like(memory / 2, memory / 2);
    let hybrid = Design::hybrid(6, memory / 4, memory / 4, memory / 64);
    vec![
        (DesignClass::Lsm, lsm),
        (DesignClass::Btree, btree),
        (DesignClass::Lsh, lsh),
        (DesignClass::Hybrid, hybrid),
    ]
}

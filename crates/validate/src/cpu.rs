//! The CPU an operation costs an engine, per operation type, on one core with its data in memory (what
//! `cosine profile` records for the physical throughput model): each operation type timed alone on one client
//! thread against a loaded, settled store whose write buffer holds every timed write (so no flush or
//! compaction runs while it is timed), as the process's user and system CPU time over the operations, less
//! what the store's threads burn when it does nothing (a polling thread's spin is not an operation's work); the
//! scans at two lengths, to part a scan's seek from its entries. The load before it gives, for an engine that
//! counts its background blocks, the CPU a flushed or compacted block costs.

use cosine_cost_model::cpu::OpCpu;
use cosine_cost_model::probes::Probes;
use cosine_ycsb::{
    calibration_workload, calibration_write_bytes, cpu_seconds, run_phase, CalibrationStage,
    CoreWorkload, Ledger, Store, CALIBRATION_ROUNDS,
};

/// Rounds each operation type is timed; the median is kept.
pub const CPU_ROUNDS: usize = 3;

/// How long a store is watched doing nothing, for the CPU its own threads burn idle (taken off each round).
const IDLE_SAMPLE: std::time::Duration = std::time::Duration::from_millis(1000);

/// What one engine's measurement found.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct CpuMeasured {
    /// Microseconds per operation type.
    pub op: OpCpu,
    /// The lowest and highest round of each type, as (lookup, insert, blind update, rmw) microseconds: the
    /// spread the machine's noise gave.
    pub spread: [(f64, f64); 4],
    /// CPU microseconds a block of the load's flushes and compactions cost beyond its inserts' own CPU, where
    /// the engine counts its background blocks (None otherwise, or when the load moved none).
    pub block_us: Option<f64>,
}

/// CPU seconds the process has used (user and system).
fn cpu_now() -> Result<f64, String> {
    cpu_seconds()
        .map(|(u, s)| u + s)
        .ok_or_else(|| "cannot read /proc/self/stat for the process's CPU time".to_string())
}

/// Median of three or more values.
fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

/// A load's CPU seconds, inserts and background blocks (where the engine counts them).
type LoadCost = (f64, u64, Option<u64>);

/// One operation type timed: load `w` (on `load_threads`), settle, reopen with room for every timed write,
/// warm up, then [`CPU_ROUNDS`] rounds on one thread, each the CPU microseconds per operation. Returns the
/// rounds and, from the load, (CPU seconds, inserts, background blocks).
fn time_op(
    op: &str,
    w: &CoreWorkload,
    load_threads: usize,
    open: &mut impl FnMut(&str, &CoreWorkload, CalibrationStage) -> Result<Box<dyn Store>, String>,
) -> Result<(Vec<f64>, LoadCost), String> {
    let ledger = Ledger::default();
    let store = open(op, w, CalibrationStage::Load)?;
    let before = cpu_now()?;
    let loaded = run_phase(store.as_ref(), &ledger, w, load_threads, true, 3, None);
    store.settle().map_err(|e| e.to_string())?;
    let load_cpu = cpu_now()? - before;
    let background = store.io().map(|io| io.background);
    if let Some(why) = loaded.first_wrong {
        return Err(format!(
            "{}: wrong result while loading: {why}",
            store.name()
        ));
    }
    drop(store);
    let mut w = w.clone();
    // (calibration_write_bytes counts Algorithm 1's runs on 1..=2 threads, every round; these are one thread's)
    let room = calibration_write_bytes(op, &w, 2) * (CPU_ROUNDS as u64 + 1)
        / (2 * CALIBRATION_ROUNDS as u64);
    let store = open(op, &w, CalibrationStage::Time { write_room: room })?;
    let mut warm = w.clone();
    warm.operation_count = (w.operation_count / 4).max(1);
    let r = run_phase(store.as_ref(), &ledger, &warm, 1, false, 11, None);
    w.inserted_before += r.inserted;
    // what the store's own threads burn while it does nothing (a peer's polling threads), taken off every
    // round: not work an operation does
    let idle_start = (std::time::Instant::now(), cpu_now()?);
    std::thread::sleep(IDLE_SAMPLE);
    let idle_rate = ((cpu_now()? - idle_start.1) / idle_start.0.elapsed().as_secs_f64()).max(0.0);
    let mut rounds = Vec::with_capacity(CPU_ROUNDS);
    for round in 0..CPU_ROUNDS {
        let started = std::time::Instant::now();
        let before = cpu_now()?;
        let r = run_phase(
            store.as_ref(),
            &ledger,
            &w,
            1,
            false,
            20 + round as u64,
            None,
        );
        let spent = (cpu_now()? - before - idle_rate * started.elapsed().as_secs_f64()).max(0.0);
        if let Some(why) = r.first_wrong {
            return Err(format!("{}: wrong result: {why}", store.name()));
        }
        w.inserted_before += r.inserted;
        rounds.push(spent / w.operation_count.max(1) as f64 * 1e6);
    }
    Ok((rounds, (load_cpu, loaded.inserted, background)))
}

/// The CPU an operation of each type costs the engine `open` opens, over `records` records and `ops`
/// operations a round (a twentieth of them for scans); `done` hears each type's median microseconds.
pub fn measure_op_cpu(
    records: u64,
    ops: u64,
    load_threads: usize,
    mut open: impl FnMut(&str, &CoreWorkload, CalibrationStage) -> Result<Box<dyn Store>, String>,
    mut done: impl FnMut(&str, f64),
) -> Result<CpuMeasured, String> {
    let mut medians = [0.0; 4];
    let mut spread = [(0.0, 0.0); 4];
    let mut block_us = None;
    for (i, op) in ["lookup", "insert", "blind_update", "rmw"]
        .iter()
        .enumerate()
    {
        let w = calibration_workload(op, records, ops)
            .ok_or_else(|| format!("{op} is not an operation type"))?;
        let (rounds, (load_cpu, inserted, background)) = time_op(op, &w, load_threads, &mut open)?;
        let lo = rounds.iter().copied().fold(f64::INFINITY, f64::min);
        let hi = rounds.iter().copied().fold(0.0, f64::max);
        medians[i] = median(rounds);
        spread[i] = (lo, hi);
        done(op, medians[i]);
        if *op == "insert" {
            // the load's CPU beyond its inserts' own, over the blocks its flushes and compactions moved
            block_us = background
                .filter(|&b| b > 0)
                .map(|b| ((load_cpu * 1e6 - inserted as f64 * medians[i]) / b as f64).max(0.0));
        }
    }
    // scans at two lengths (uniform in 1..=max: a mean of (max + 1) / 2 entries)
    let mut per_scan = [0.0; 2];
    for (j, max) in [100u64, 10].into_iter().enumerate() {
        let mut w = calibration_workload("range", records, ops)
            .ok_or_else(|| "range is not an operation type".to_string())?;
        w.max_scan_length = max;
        let (rounds, _) = time_op("range", &w, load_threads, &mut open)?;
        per_scan[j] = median(rounds);
        done(
            if max == 100 {
                "scan(1..100)"
            } else {
                "scan(1..10)"
            },
            per_scan[j],
        );
    }
    let (long, short) = ((100.0 + 1.0) / 2.0, (10.0 + 1.0) / 2.0);
    let scan_entry_us = ((per_scan[0] - per_scan[1]) / (long - short)).max(0.0);
    let scan_us = (per_scan[1] - short * scan_entry_us).max(0.0);
    Ok(CpuMeasured {
        op: OpCpu {
            lookup_us: medians[0],
            insert_us: medians[1],
            blind_update_us: medians[2],
            rmw_us: medians[3],
            scan_us,
            scan_entry_us,
            probe_us: 0.0,
        },
        spread,
        block_us,
    })
}

/// Each design class's CPU costs, and the CPU microseconds of a background block.
pub type EngineCpu = (Vec<(cosine_design::DesignClass, CpuMeasured)>, Option<f64>);

/// The runs a lookup consults on `engine` as it stands ([`Probes::of_runs`] over its levels' runs and
/// entries, level 1 first): what the CPU of its lookups was measured at.
pub fn engine_probes(engine: &cosine_engine::Engine) -> Probes {
    Probes::of_runs(engine.stats().levels.iter().map(|l| {
        let runs = l.runs as f64;
        (runs, l.entries as f64 / runs.max(1.0))
    }))
}

/// Records the lookups that part a run's CPU are timed over (at most): enough keys that the runs' hash
/// indexes, fences and filters outgrow the CPU's caches, as a store of gigabytes does (a probe then misses
/// them); small values keep the load short.
pub const PROBE_RECORDS: u64 = 2_000_000;

/// Fence memory of the probe stores: room for every run's fences or hash index over [`PROBE_RECORDS`].
const PROBE_FENCE_BYTES: u64 = 256 << 20;

/// Value bytes of the records the probe lookups read.
const PROBE_VALUE_BYTES: u32 = 100;

/// The two stores a run's CPU is parted on, from a class's `design`, over the same data: one with a 64 MiB
/// write buffer (few, large runs) and one whose levels gather T − 1 runs before a merge (a log-structured
/// hash table already does) from a 4 MiB buffer (many small runs). Both keep every run's fences or hash index
/// in memory: consulting a cold run reads its index, an I/O the I/O model counts, not a probe.
pub fn probe_designs(design: &cosine_design::Design) -> [cosine_design::Design; 2] {
    let mut few = design.clone();
    few.buffer_bytes = 64 << 20;
    few.fence_bytes = few.fence_bytes.max(PROBE_FENCE_BYTES);
    let mut many = few.clone();
    let k = many.size_ratio.saturating_sub(1).max(1);
    (many.hot_runs, many.cold_runs) = (k, k);
    many.buffer_bytes = 4 << 20;
    [few, many]
}

/// The CPU a lookup costs each run it consults, from lookups timed at two probe counts, (µs, probes) each:
/// (µs of a lookup that consults none, µs a run). None when the two stores' probes are too close to part.
pub fn fit_probe_cost(few: (f64, Probes), many: (f64, Probes)) -> Option<(f64, f64)> {
    let spread = many.1.lookup - few.1.lookup;
    if spread < 4.0 {
        return None;
    }
    let probe_us = ((many.0 - few.0) / spread).max(0.0);
    Some(((few.0 - probe_us * few.1.lookup).max(0.0), probe_us))
}

/// Opens our engine on `design` in `dir` for a stage of [`measure_op_cpu`] (a load starts from an empty
/// directory, recorded in `opened`; a timed stage has room in its buffer for the timed writes), and the
/// probes its lookups meet.
fn open_engine(
    dir: std::path::PathBuf,
    design: &cosine_design::Design,
    stage: CalibrationStage,
    opened: &mut Vec<std::path::PathBuf>,
) -> Result<(Box<dyn Store>, Probes), String> {
    use cosine_engine::{Engine, Options, SyncMode};
    let mut design = design.clone();
    match stage {
        CalibrationStage::Time { write_room } => {
            design.buffer_bytes = design.buffer_bytes.max(write_room);
        }
        CalibrationStage::Load => {
            let _ = std::fs::remove_dir_all(&dir);
            opened.push(dir.clone());
        }
    }
    let engine = Engine::open_with(&dir, &design, Options::with_sync(SyncMode::Never))
        .map_err(|e| e.to_string())?;
    let probes = engine_probes(&engine);
    Ok((
        Box::new(cosine_ycsb::CosineStore(std::sync::Arc::new(engine))),
        probes,
    ))
}

/// Lookups timed on the two [`probe_designs`] of `design` over [`PROBE_RECORDS`] (or twenty times
/// `records`, if fewer) of small values: (µs, probes) of each.
fn time_probe_pair(
    design: &cosine_design::Design,
    records: u64,
    ops: u64,
    opened: &mut Vec<std::path::PathBuf>,
    dir_of: &dyn Fn(&str) -> std::path::PathBuf,
) -> Result<[(f64, Probes); 2], String> {
    let mut w = calibration_workload("lookup", (records * 20).min(PROBE_RECORDS), ops)
        .expect("lookup is an operation type");
    (w.field_count, w.field_length) = (1, PROBE_VALUE_BYTES);
    let mut out = [(0.0, Probes::default()); 2];
    for (i, d) in probe_designs(design).iter().enumerate() {
        let mut probes = Probes::default();
        let (rounds, _) = time_op("lookup", &w, 2, &mut |_, _, stage| {
            let (store, p) = open_engine(dir_of(&format!("probe-{i}")), d, stage, opened)?;
            if stage != CalibrationStage::Load {
                probes = p;
            }
            Ok(store)
        })?;
        out[i] = (median(rounds), probes);
    }
    Ok(out)
}

/// [`measure_op_cpu`] on our engine, for each design class (the class designs of `cosine calibrate`, 16 MiB):
/// the CPU costs per class, and the CPU a background block costs (the LSM class's load: its flushes and
/// compactions). A class's lookups are timed again on the two [`probe_designs`] of its design, which part a
/// lookup's own CPU from each run it consults ([`fit_probe_cost`]). `each` hears (class, operation,
/// microseconds).
pub fn measure_engine_cpu(
    records: u64,
    ops: u64,
    mut each: impl FnMut(&str, &str, f64),
) -> crate::Result<EngineCpu> {
    let mut out = Vec::new();
    let mut block_us = None;
    for (class, design) in crate::harness::class_designs(16 << 20) {
        let dir_of = |op: &str| {
            std::env::temp_dir().join(format!("cosine-cpu-{}-{class}-{op}", std::process::id()))
        };
        let mut opened: Vec<std::path::PathBuf> = Vec::new();
        let mut few = Probes::default();
        let measured = measure_op_cpu(
            records,
            ops,
            2,
            |op, _, stage| {
                let (store, probes) = open_engine(dir_of(op), &design, stage, &mut opened)?;
                if op == "lookup" && stage != CalibrationStage::Load {
                    few = probes;
                }
                Ok(store)
            },
            |op, us| each(class.as_str(), op, us),
        );
        let pair = measured
            .as_ref()
            .ok()
            .map(|_| time_probe_pair(&design, records, ops, &mut opened, &dir_of));
        for dir in opened {
            let _ = std::fs::remove_dir_all(dir);
        }
        let mut measured = measured.map_err(crate::Error::Invalid)?;
        let pair = pair
            .expect("timed when the class measured")
            .map_err(crate::Error::Invalid)?;
        for (us, probes) in pair {
            each(
                class.as_str(),
                &format!("lookup over {:.1} runs", probes.lookup),
                us,
            );
        }
        if let Some((own, probe_us)) = fit_probe_cost(pair[0], pair[1]) {
            // the class's lookups (1 KB records) less the runs they consulted; where that leaves nothing (the
            // probe stores' blocks cost more to read than the class store's), the probe stores' own
            let rest = measured.op.lookup_us - probe_us * few.lookup;
            measured.op.probe_us = probe_us;
            measured.op.lookup_us = if rest > 0.0 { rest } else { own };
        }
        if class == cosine_design::DesignClass::Lsm {
            block_us = measured.block_us;
        }
        out.push((class, measured));
    }
    Ok((out, block_us))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn two_stores_part_a_lookup_from_its_runs() {
        let at = |runs: f64| Probes::of_runs([(runs, 1000.0)]);
        // 5 µs and 0.5 µs a run: 3 runs (2 consulted) and 41 runs (21)
        let (few, many) = ((5.0 + 0.5 * 2.0, at(3.0)), (5.0 + 0.5 * 21.0, at(41.0)));
        let (own, per_run) = fit_probe_cost(few, many).unwrap();
        assert!((own - 5.0).abs() < 1e-9 && (per_run - 0.5).abs() < 1e-9);
        // too close to part, or a noisy store that ran faster with more runs
        assert_eq!(fit_probe_cost(few, (6.5, at(6.0))), None);
        assert_eq!(fit_probe_cost(few, (5.5, at(41.0))), Some((6.0, 0.0)));
        let [f, m] = probe_designs(&cosine_design::Design::rocksdb_like(
            8 << 20,
            1 << 20,
            1 << 20,
        ));
        assert_eq!((f.hot_runs, f.buffer_bytes), (1, 64 << 20));
        assert!(f.fence_bytes == PROBE_FENCE_BYTES && m.fence_bytes == PROBE_FENCE_BYTES);
        assert_eq!((m.hot_runs, m.cold_runs, m.buffer_bytes), (9, 9, 4 << 20));
    }
}

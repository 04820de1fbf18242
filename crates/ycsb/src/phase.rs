//! The phase runner ([`run_phase`]): a load (inserts only) or a run of a workload's operation mix on N client
//! threads, every result checked against the ledger, every operation timed by kind, and the store's I/O
//! counted over the phase.

use crate::keys::{key, KeyChooser};
use crate::report::{latency_histogram, ClientTimes, OpReport, PhaseReport};
use crate::store::{IoCounters, Store, StoreResult};
use crate::verify::{self, KeyOrder, Ledger};
use crate::workload::CoreWorkload;
use hdrhistogram::Histogram;
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;
use std::time::Instant;

/// The operation kinds a phase reports, in the order of a client thread's per-kind slots.
const KINDS: [&str; 5] = ["read", "update", "insert", "scan", "rmw"];
/// The slots of [`KINDS`].
const READ: usize = 0;
const UPDATE: usize = 1;
const INSERT: usize = 2;
const SCAN: usize = 3;
const RMW: usize = 4;

/// A write the harness hands a key and a value to (an insert or an update of a store).
type WriteFn<'a> = &'a dyn Fn(&[u8], &[u8]) -> StoreResult<()>;

/// What one operation came to: a store error, a wrong result (described), or neither.
type Outcome = StoreResult<Result<(), String>>;

/// One client thread's latency histograms and block reads, per operation kind (a histogram only for the kinds
/// it ran), and where its time went.
type ThreadLatencies = (Vec<Option<Histogram<u64>>>, [u64; 5], Option<ClientTimes>);

/// Runs `ops` operations of the workload on `threads` threads (load phase: `load = true`, inserts only),
/// checking every result against `ledger` (one ledger per store, kept across its phases: see [`verify`]).
pub fn run_phase(
    store: &dyn Store,
    ledger: &Ledger,
    w: &CoreWorkload,
    threads: usize,
    load: bool,
    seed: u64,
    progress: Option<&AtomicU64>,
) -> PhaseReport {
    let threads = threads.max(1);
    let ops = if load {
        w.record_count.saturating_sub(w.loaded_before)
    } else {
        w.operation_count
    };
    let phase = Phase::new(store, ledger, w, load, progress);
    let io_before = store.io();
    let start = Instant::now();
    let per_thread = store.thread_reads().is_some();
    let latencies = phase.run_clients(threads, ops, seed);
    let seconds = start.elapsed().as_secs_f64();
    let io_after = store.io();
    phase.report(ops, seconds, (io_before, io_after), per_thread, &latencies)
}

/// What every client thread of a phase shares: the store, the ledger, the workload, and the counters they add
/// to.
struct Phase<'a> {
    store: &'a dyn Store,
    ledger: &'a Ledger,
    w: &'a CoreWorkload,
    /// A load phase (inserts only) or a run of the workload's mix.
    load: bool,
    /// Bytes of a value.
    value_len: usize,
    chooser: KeyChooser,
    /// What a scan must not skip: the records acknowledged before this phase, in key order.
    order: Option<KeyOrder>,
    /// The record number the first insert of this phase writes.
    first_insert: u64,
    /// The record number the next insert writes (a run's inserts; a load counts its records here too).
    inserted: AtomicU64,
    /// The record number the next write of a load writes.
    next_load: AtomicU64,
    /// Operations the store failed.
    errors: AtomicU64,
    /// Operations whose answer contradicts what was acknowledged.
    wrong: AtomicU64,
    /// The first wrong answer, described.
    first_wrong: Mutex<Option<String>>,
    /// Counted up after every operation, for a progress display.
    progress: Option<&'a AtomicU64>,
}

impl<'a> Phase<'a> {
    /// The phase's shared state; a run with scans orders the acknowledged records first (before the clock
    /// starts).
    fn new(
        store: &'a dyn Store,
        ledger: &'a Ledger,
        w: &'a CoreWorkload,
        load: bool,
        progress: Option<&'a AtomicU64>,
    ) -> Self {
        let first_insert = if load {
            0
        } else {
            w.record_count + w.inserted_before
        };
        let chooser = KeyChooser::new(w);
        let order = (!load && w.scan > 0.0)
            .then(|| {
                KeyOrder::new(ledger, w.record_count + w.inserted_before, |n| {
                    key(n, w.hashed_keys)
                })
            })
            .flatten();
        Phase {
            store,
            ledger,
            w,
            load,
            value_len: w.value_bytes(),
            chooser,
            order,
            first_insert,
            inserted: AtomicU64::new(first_insert),
            next_load: AtomicU64::new(w.loaded_before),
            errors: AtomicU64::new(0),
            wrong: AtomicU64::new(0),
            first_wrong: Mutex::new(None),
            progress,
        }
    }

    /// Runs `ops` operations split over `threads` client threads; each thread's latencies and times.
    fn run_clients(&self, threads: usize, ops: u64, seed: u64) -> Vec<ThreadLatencies> {
        std::thread::scope(|s| {
            let handles: Vec<_> = (0..threads)
                .map(|t| {
                    let my_ops =
                        ops / threads as u64 + u64::from((t as u64) < ops % threads as u64);
                    s.spawn(move || self.client(t, my_ops, seed))
                })
                .collect();
            handles
                .into_iter()
                .map(|h| h.join().unwrap_or_default())
                .collect()
        })
    }

    /// Client thread `t`: `my_ops` operations, each checked, counted and timed.
    fn client(&self, t: usize, my_ops: u64, seed: u64) -> ThreadLatencies {
        let mut rng = StdRng::seed_from_u64(seed ^ (t as u64).wrapping_mul(0x9E37_79B9));
        // made when the thread first runs an operation of the kind: a workload uses 1-3 of 5
        let mut h: Vec<Option<Histogram<u64>>> = vec![None; 5];
        let mut reads = [0u64; 5];
        let (times0, wall0) = (ClientTimes::of_this_thread(), Instant::now());
        for _ in 0..my_ops {
            let r0 = self.store.thread_reads();
            let t0 = Instant::now();
            let (kind, res) = self.operation(&mut rng);
            self.tally(res);
            let micros = (t0.elapsed().as_micros() as u64).max(1);
            if h[kind].is_none() {
                h[kind] = latency_histogram();
            }
            if let Some(hist) = &mut h[kind] {
                let _ = hist.record(micros);
            }
            if let (Some(a), Some(b)) = (r0, self.store.thread_reads()) {
                reads[kind] += b - a;
            }
            if let Some(p) = self.progress {
                p.fetch_add(1, Ordering::Relaxed);
            }
        }
        let times = times0
            .zip(ClientTimes::of_this_thread())
            .map(|(a, b)| a.until(&b, wall0.elapsed().as_secs_f64()));
        (h, reads, times)
    }

    /// One operation: the load's next insert, or one drawn from the workload's mix. Its kind (a slot of
    /// [`KINDS`]) and what it came to.
    fn operation(&self, rng: &mut StdRng) -> (usize, Outcome) {
        if self.load {
            return (INSERT, self.load_one());
        }
        let w = self.w;
        let x: f64 = rng.random();
        let have = self.inserted.load(Ordering::Relaxed);
        if x < w.read {
            (READ, self.read(rng, have))
        } else if x < w.read + w.update {
            let n = self.chooser.next(rng, have);
            (
                UPDATE,
                self.write(n, &|k, v| self.store.update(k, v)).map(Ok),
            )
        } else if x < w.read + w.update + w.insert {
            let n = self.inserted.fetch_add(1, Ordering::Relaxed);
            (
                INSERT,
                self.write(n, &|k, v| self.store.insert(k, v)).map(Ok),
            )
        } else if x < w.read + w.update + w.insert + w.scan {
            (SCAN, self.scan(rng, have))
        } else {
            (RMW, self.read_modify_write(rng, have))
        }
    }

    /// Counts a store error or a wrong result (keeping the first one's description).
    fn tally(&self, res: Outcome) {
        match res {
            Err(_) => {
                self.errors.fetch_add(1, Ordering::Relaxed);
            }
            Ok(Err(why)) => {
                self.wrong.fetch_add(1, Ordering::Relaxed);
                self.first_wrong
                    .lock()
                    .unwrap_or_else(|p| p.into_inner())
                    .get_or_insert(why);
            }
            Ok(Ok(())) => {}
        }
    }

    /// The key of record `n`.
    fn key_of(&self, n: u64) -> Vec<u8> {
        key(n, self.w.hashed_keys)
    }

    /// A write of record `n`: its next version, written by `f` under the record's lock, then acknowledged.
    fn write(&self, n: u64, f: WriteFn<'_>) -> StoreResult<()> {
        let _g = self.ledger.lock(n);
        let v = self.ledger.issue(n);
        let k = self.key_of(n);
        f(&k, &verify::make_value(n, v, self.value_len))?;
        self.ledger.acknowledge(n, v, &k);
        Ok(())
    }

    /// The load's next record, inserted.
    fn load_one(&self) -> Outcome {
        let n = self.next_load.fetch_add(1, Ordering::Relaxed);
        let r = self.write(n, &|k, v| self.store.insert(k, v));
        self.inserted.fetch_add(1, Ordering::Relaxed);
        r.map(Ok)
    }

    /// A read of a record among the `have` so far, checked against what was acknowledged before it began.
    fn read(&self, rng: &mut StdRng, have: u64) -> Outcome {
        let n = self.chooser.next(rng, have);
        let floor = self.ledger.acknowledged(n);
        let got = self.store.read(&self.key_of(n));
        got.map(|g| self.ledger.check_read(n, floor, g.as_deref()))
    }

    /// A scan of 1..=`max_scan_length` records from a chosen record's key, checked for order, contents and
    /// records it skipped.
    fn scan(&self, rng: &mut StdRng, have: u64) -> Outcome {
        let len = rng.random_range(1..=self.w.max_scan_length.max(1)) as usize;
        let from = self.key_of(self.chooser.next(rng, have));
        let max_key = self.ledger.max_key();
        let got = self.store.scan(&from, len);
        got.map(|e| {
            self.ledger.check_scan(
                &from,
                len,
                &max_key,
                &e,
                |n| self.key_of(n),
                self.order.as_ref(),
            )
        })
    }

    /// A read-modify-write of a chosen record under its lock: the value read is checked as a read's, the
    /// value written is the record's next version.
    fn read_modify_write(&self, rng: &mut StdRng, have: u64) -> Outcome {
        let n = self.chooser.next(rng, have);
        let _g = self.ledger.lock(n);
        let floor = self.ledger.acknowledged(n);
        let v = self.ledger.issue(n);
        let k = self.key_of(n);
        let mut checked = Ok(());
        let r = self.store.read_modify_write(&k, &mut |old| {
            checked = self.ledger.check_read(n, floor, old);
            verify::make_value(n, v, self.value_len)
        });
        if r.is_ok() {
            self.ledger.acknowledge(n, v, &k);
        }
        r.map(|_| checked)
    }

    /// The phase's report from its clients' latencies and the store's I/O counters before and after.
    fn report(
        self,
        ops: u64,
        seconds: f64,
        (io_before, io_after): (Option<IoCounters>, Option<IoCounters>),
        per_thread: bool,
        latencies: &[ThreadLatencies],
    ) -> PhaseReport {
        let per = |f: fn(&IoCounters) -> u64| match (io_before, io_after) {
            (Some(a), Some(b)) if ops > 0 => Some((f(&b) - f(&a)) as f64 / ops as f64),
            _ => None,
        };
        PhaseReport {
            operations: ops,
            seconds,
            throughput: ops as f64 / seconds.max(1e-9),
            ops: per_kind(latencies, per_thread),
            read_ios_per_op: per(|c| c.reads),
            background_ios_per_op: per(|c| c.background),
            errors: self.errors.load(Ordering::Relaxed),
            wrong: self.wrong.load(Ordering::Relaxed),
            first_wrong: self
                .first_wrong
                .into_inner()
                .unwrap_or_else(|p| p.into_inner()),
            inserted: self.inserted.load(Ordering::Relaxed) - self.first_insert,
            client: latencies
                .iter()
                .map(|(_, _, t)| *t)
                .reduce(|a, b| a.zip(b).map(|(a, b)| a.plus(&b)))
                .flatten(),
        }
    }
}

/// The client threads' histograms merged per operation kind, as percentiles (with read-path blocks per
/// operation when the store counts them per thread); kinds no thread ran are left out.
fn per_kind(latencies: &[ThreadLatencies], per_thread: bool) -> Vec<(String, OpReport)> {
    let mut ops_out = Vec::new();
    for (k, name) in KINDS.iter().enumerate() {
        let Some(mut merged) = latency_histogram() else {
            continue;
        };
        let mut reads = 0u64;
        for (h, r, _) in latencies {
            if let Some(Some(x)) = h.get(k) {
                let _ = merged.add(x);
            }
            reads += r[k];
        }
        if !merged.is_empty() {
            ops_out.push((
                name.to_string(),
                OpReport {
                    count: merged.len(),
                    p50_us: merged.value_at_quantile(0.5) as f64,
                    p95_us: merged.value_at_quantile(0.95) as f64,
                    p99_us: merged.value_at_quantile(0.99) as f64,
                    read_ios: per_thread.then(|| reads as f64 / merged.len() as f64),
                },
            ));
        }
    }
    ops_out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::{CosineStore, Entries};
    use cosine_engine::{Design, Engine, Options, SyncMode};
    use std::sync::Arc;

    #[test]
    fn a_client_thread_s_cpu_time_and_its_sleep_are_told_apart() {
        let t0 = ClientTimes::of_this_thread().expect("/proc/thread-self");
        let started = std::time::Instant::now();
        let mut x = 0u64;
        while started.elapsed().as_millis() < 60 {
            x = std::hint::black_box(x.wrapping_mul(6364136223846793005).wrapping_add(1));
        }
        std::thread::sleep(std::time::Duration::from_millis(60));
        let t = t0.until(
            &ClientTimes::of_this_thread().unwrap(),
            started.elapsed().as_secs_f64(),
        );
        // (the spin's 60 ms are on a CPU or waiting for one, on a busy machine)
        assert!(t.cpu + t.runqueue >= 0.03 && t.cpu <= t.wall, "{t:?}");
        // the sleep is neither CPU nor run queue: it is blocked time
        assert!(t.blocked() >= 0.05, "{t:?}");
        // a phase sums its client threads' times
        let dir = tempfile::tempdir().unwrap();
        let design = Design::rocksdb_like(256 << 10, 64 << 10, 1 << 20);
        let engine = Arc::new(
            Engine::open_with(dir.path(), &design, Options::with_sync(SyncMode::Never)).unwrap(),
        );
        let mut w = CoreWorkload::named("a").unwrap();
        (w.record_count, w.field_length) = (500, 20);
        let r = run_phase(
            &CosineStore(engine),
            &Ledger::default(),
            &w,
            2,
            true,
            1,
            None,
        );
        let c = r.client.expect("client times");
        assert!(
            c.wall > 0.0 && c.cpu > 0.0 && c.cpu <= c.wall * 1.05,
            "{c:?}"
        );
    }

    #[test]
    fn load_and_run_every_core_workload() {
        for n in ["a", "b", "c", "d", "e", "f"] {
            let dir = tempfile::tempdir().unwrap();
            let design = Design {
                block_bytes: 4096,
                ..Design::rocksdb_like(256 << 10, 64 << 10, 1 << 20)
            };
            let engine = Arc::new(
                Engine::open_with(dir.path(), &design, Options::with_sync(SyncMode::Never))
                    .unwrap(),
            );
            let store = CosineStore(engine);
            let mut w = CoreWorkload::named(n).unwrap();
            w.record_count = 3000;
            w.operation_count = 2000;
            w.field_length = 20;
            let ledger = Ledger::default();
            let load = run_phase(&store, &ledger, &w, 2, true, 7, None);
            assert_eq!((load.operations, load.errors, load.wrong), (3000, 0, 0));
            store.settle().unwrap();
            let run = run_phase(&store, &ledger, &w, 2, false, 8, None);
            assert_eq!(
                (run.errors, run.wrong),
                (0, 0),
                "{n}: {:?}",
                run.first_wrong
            );
            let total: u64 = run.ops.iter().map(|o| o.1.count).sum();
            assert_eq!(total, 2000);
            assert!(run.read_ios_per_op.unwrap() >= 0.0);
            if n == "c" {
                assert_eq!(run.ops.len(), 1);
            }
        }
    }

    #[test]
    fn a_load_in_parts_loads_every_record_once() {
        let dir = tempfile::tempdir().unwrap();
        let design = Design::rocksdb_like(256 << 10, 64 << 10, 1 << 20);
        let engine = Arc::new(
            Engine::open_with(dir.path(), &design, Options::with_sync(SyncMode::Never)).unwrap(),
        );
        let store = CosineStore(engine.clone());
        let mut w = CoreWorkload::named("c").unwrap();
        (w.record_count, w.operation_count, w.field_length) = (2000, 3000, 20);
        let ledger = Ledger::default();
        let mut loaded = 0;
        for to in [700, 701, 2000] {
            let mut part = w.clone();
            (part.loaded_before, part.record_count) = (loaded, to);
            let r = run_phase(&store, &ledger, &part, 2, true, 7, None);
            assert_eq!(
                (r.operations, r.inserted, r.errors),
                (to - loaded, to - loaded, 0)
            );
            loaded = to;
        }
        // every record is there (the reads check each value against the ledger), and no other
        let run = run_phase(&store, &ledger, &w, 2, false, 8, None);
        assert_eq!((run.errors, run.wrong), (0, 0), "{:?}", run.first_wrong);
        assert_eq!(engine.scan(.., 10_000).unwrap().len(), 2000);
    }

    /// A store that lies: it acknowledges every 20th update without making it, and drops the last entry of
    /// every scan of more than one.
    struct Lying(CosineStore, AtomicU64);

    impl Store for Lying {
        fn name(&self) -> String {
            "lying".into()
        }
        fn insert(&self, key: &[u8], value: &[u8]) -> StoreResult<()> {
            self.0.insert(key, value)
        }
        fn read(&self, key: &[u8]) -> StoreResult<Option<Vec<u8>>> {
            self.0.read(key)
        }
        fn update(&self, key: &[u8], value: &[u8]) -> StoreResult<()> {
            if self.1.fetch_add(1, Ordering::Relaxed) % 20 == 19 {
                return Ok(());
            }
            self.0.update(key, value)
        }
        fn scan(&self, start: &[u8], count: usize) -> StoreResult<Entries> {
            let mut v = self.0.scan(start, count)?;
            if v.len() > 1 {
                v.pop();
            }
            Ok(v)
        }
        fn read_modify_write(
            &self,
            key: &[u8],
            f: &mut dyn FnMut(Option<&[u8]>) -> Vec<u8>,
        ) -> StoreResult<()> {
            self.0.read_modify_write(key, f)
        }
        fn io(&self) -> Option<IoCounters> {
            None
        }
        fn settle(&self) -> StoreResult<()> {
            self.0.settle()
        }
    }

    #[test]
    fn lost_writes_and_short_scans_are_wrong_results() {
        for (n, what) in [("a", "stale"), ("e", "returned")] {
            let dir = tempfile::tempdir().unwrap();
            let design = Design::rocksdb_like(256 << 10, 64 << 10, 1 << 20);
            let engine =
                Engine::open_with(dir.path(), &design, Options::with_sync(SyncMode::Never));
            let store = Lying(CosineStore(Arc::new(engine.unwrap())), AtomicU64::new(0));
            let mut w = CoreWorkload::named(n).unwrap();
            w.record_count = 500;
            w.operation_count = 3000;
            w.field_length = 20;
            let ledger = Ledger::default();
            run_phase(&store, &ledger, &w, 2, true, 7, None);
            let run = run_phase(&store, &ledger, &w, 2, false, 8, None);
            assert!(run.wrong > 0, "{n}");
            let why = run.first_wrong.unwrap();
            assert!(why.contains(what), "{n}: {why}");
        }
    }
}

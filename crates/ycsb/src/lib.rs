//! `cosine-ycsb`: YCSB's core workloads over the engine (and, through the [`Store`] trait, over peer engines):
//! key choosers as YCSB defines them (uniform, scrambled zipfian with θ = 0.99, latest), a load phase and a run
//! phase on N client threads, latency percentiles (hdrhistogram) and the engine's I/O counts per operation.
#![deny(missing_docs)]
// a library reports failures as typed errors; unit tests may unwrap
#![deny(clippy::unwrap_used)]
#![cfg_attr(test, allow(clippy::unwrap_used))]

pub mod ceiling;
pub mod verify;
pub mod workload;

use cosine_engine::Engine;
use hdrhistogram::Histogram;
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use rand_distr::{Distribution as _, Zipf};
use serde::Serialize;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Instant;
pub use verify::{KeyOrder, Ledger};
pub use workload::{parse_properties, CoreWorkload, Distribution};

/// YCSB's scrambled zipfian draws ranks from this many items before hashing them onto the key space.
pub const ZIPF_ITEMS: f64 = 10_000_000_000.0;

/// FNV-1a 64 (YCSB's `fnvhash64`), for hashed key order and the scrambled zipfian.
pub fn fnv64(x: u64) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in x.to_le_bytes() {
        h ^= b as u64;
        h = h.wrapping_mul(0x0000_0100_0000_01b3);
    }
    h
}

/// The key of record `n`: "user" followed by hash(n) (hashed order) or n.
pub fn key(n: u64, hashed: bool) -> Vec<u8> {
    format!("user{}", if hashed { fnv64(n) } else { n }).into_bytes()
}

/// I/O counters of a store, where it has them.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct IoCounters {
    /// Data and index blocks read by reads and scans.
    pub reads: u64,
    /// Blocks written and read by flushes and compactions.
    pub background: u64,
}

/// Entries a scan returns: (key, value) in key order.
pub type Entries = Vec<(Vec<u8>, Vec<u8>)>;

/// What a store's operation failed with.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// Cosine's engine, with its typed error (I/O, corruption, poisoned, closed, sizes).
    #[error(transparent)]
    Engine(#[from] cosine_engine::Error),
    /// A peer engine (RocksDB, WiredTiger, fjall, redb, sled) in its own words, or the harness around it.
    #[error("{0}")]
    Peer(String),
}

impl From<String> for StoreError {
    fn from(message: String) -> Self {
        StoreError::Peer(message)
    }
}

/// A store operation's result.
pub type StoreResult<T> = Result<T, StoreError>;

/// A write the harness hands a key and a value to (an insert or an update of a store).
type WriteFn<'a> = &'a dyn Fn(&[u8], &[u8]) -> StoreResult<()>;

/// A key-value engine the harness can drive (our engine, or a peer through its adapter).
pub trait Store: Send + Sync {
    /// Name for reports.
    fn name(&self) -> String;
    /// Inserts a new record.
    fn insert(&self, key: &[u8], value: &[u8]) -> StoreResult<()>;
    /// Reads a record.
    fn read(&self, key: &[u8]) -> StoreResult<Option<Vec<u8>>>;
    /// Overwrites a record (a blind write).
    fn update(&self, key: &[u8], value: &[u8]) -> StoreResult<()>;
    /// Reads up to `count` records from `start` in key order: (key, value) pairs.
    fn scan(&self, start: &[u8], count: usize) -> StoreResult<Entries>;
    /// Reads a record and writes back what `f` makes of it, atomically (no other write to the key between).
    fn read_modify_write(
        &self,
        key: &[u8],
        f: &mut dyn FnMut(Option<&[u8]>) -> Vec<u8>,
    ) -> StoreResult<()>;
    /// I/O counters so far.
    fn io(&self) -> Option<IoCounters>;
    /// Read-path blocks the calling thread has read so far, when the engine counts them per thread (lets the
    /// harness attribute I/Os to each operation type exactly).
    fn thread_reads(&self) -> Option<u64> {
        None
    }
    /// Makes everything durable and waits for background work (between load and run).
    fn settle(&self) -> StoreResult<()>;
}

/// The Cosine engine as a [`Store`].
pub struct CosineStore(pub Arc<Engine>);

impl Store for CosineStore {
    fn name(&self) -> String {
        format!(
            "cosine ({})",
            self.0
                .design()
                .class
                .map_or("design".to_string(), |c| format!("{c} design"))
        )
    }
    fn insert(&self, key: &[u8], value: &[u8]) -> StoreResult<()> {
        self.0.put(key, value).map_err(StoreError::from)
    }
    fn read(&self, key: &[u8]) -> StoreResult<Option<Vec<u8>>> {
        self.0.get(key).map_err(StoreError::from)
    }
    fn update(&self, key: &[u8], value: &[u8]) -> StoreResult<()> {
        self.0.put(key, value).map_err(StoreError::from)
    }
    fn scan(&self, start: &[u8], count: usize) -> StoreResult<Entries> {
        self.0
            .scan(start.to_vec().., count)
            .map_err(StoreError::from)
    }
    fn read_modify_write(
        &self,
        key: &[u8],
        f: &mut dyn FnMut(Option<&[u8]>) -> Vec<u8>,
    ) -> StoreResult<()> {
        self.0
            .read_modify_write(key, |old| Some(f(old)))
            .map(|_| ())
            .map_err(StoreError::from)
    }
    fn io(&self) -> Option<IoCounters> {
        let s = self.0.stats();
        let background: u64 = s
            .levels
            .iter()
            .map(|l| l.io.block_writes + l.io.compaction_reads)
            .sum();
        Some(IoCounters {
            reads: s.block_reads() + s.index_reads(),
            background,
        })
    }
    fn thread_reads(&self) -> Option<u64> {
        Some(cosine_engine::thread_read_blocks())
    }
    fn settle(&self) -> StoreResult<()> {
        self.0
            .flush()
            .and_then(|_| self.0.wait_for_compactions())
            .map_err(StoreError::from)
    }
}

/// Chooses request keys as YCSB does.
pub struct KeyChooser {
    dist: Distribution,
    zipf_items: Option<Zipf<f64>>,
    theta: f64,
}

impl KeyChooser {
    /// A chooser for a workload.
    pub fn new(w: &CoreWorkload) -> Self {
        let zipf_items = match w.distribution {
            Distribution::Zipfian => Zipf::new(ZIPF_ITEMS, w.zipfian_constant).ok(),
            _ => None,
        };
        KeyChooser {
            dist: w.distribution,
            zipf_items,
            theta: w.zipfian_constant,
        }
    }

    /// A record number among the `inserted` records so far.
    pub fn next(&self, rng: &mut StdRng, inserted: u64) -> u64 {
        let n = inserted.max(1);
        match self.dist {
            Distribution::Uniform => rng.random_range(0..n),
            Distribution::Zipfian => {
                let rank = self.zipf_items.as_ref().map_or(0.0, |z| z.sample(rng)) as u64;
                fnv64(rank) % n
            }
            Distribution::Latest => {
                let rank = Zipf::new(n as f64, self.theta)
                    .map(|z| z.sample(rng) as u64)
                    .unwrap_or(1);
                n - rank.clamp(1, n)
            }
        }
    }
}

/// Latency percentiles of one operation type, in microseconds.
#[derive(Clone, Debug, Default, Serialize)]
pub struct OpReport {
    /// Operations.
    pub count: u64,
    /// Median.
    pub p50_us: f64,
    /// 95th percentile.
    pub p95_us: f64,
    /// 99th percentile.
    pub p99_us: f64,
    /// Read-path blocks (data and index) per operation of this type, when the engine counts them per thread.
    pub read_ios: Option<f64>,
}

/// Where the client threads' time went, summed over the threads of a phase: on a CPU, waiting for a CPU, and
/// in all. What is left (the wall time less the two) the threads spent blocked: on the device, a lock (the
/// harness's own per-record lock among them: two threads writing one hot key take turns), a condition
/// variable, a write stall, a page fault, a sleep. The CPU is the client's as well as the engine's foreground
/// work (making values, checking reads).
///
/// (The kernel's per-thread block-I/O delay, `/proc/thread-self/stat` field 42 with `kernel.task_delayacct`,
/// would split the device off; on this machine's kernel (6.18) about one thread in three came back with the
/// system's uptime added to it, so it is not used.)
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize)]
pub struct ClientTimes {
    /// Seconds the threads lived through, each from its first operation to its last (summed).
    pub wall: f64,
    /// Seconds on a CPU, user and kernel (the scheduler's runtime, `/proc/thread-self/schedstat`).
    pub cpu: f64,
    /// Seconds runnable and waiting for a CPU (schedstat's run delay).
    pub runqueue: f64,
}

impl ClientTimes {
    /// The calling thread's totals so far (its wall field 0); `None` off Linux.
    pub fn of_this_thread() -> Option<ClientTimes> {
        let sched = std::fs::read_to_string("/proc/thread-self/schedstat").ok()?;
        let mut f = sched.split_whitespace();
        let cpu_ns: u64 = f.next()?.parse().ok()?;
        let wait_ns: u64 = f.next()?.parse().ok()?;
        let slices: u64 = f.next()?.parse().ok()?;
        // (a kernel without scheduler statistics prints zeros, where a running thread has been put on a CPU
        // at least once: no figure rather than all of the time blocked)
        if slices == 0 {
            return None;
        }
        Some(ClientTimes {
            wall: 0.0,
            cpu: cpu_ns as f64 / 1e9,
            runqueue: wait_ns as f64 / 1e9,
        })
    }

    /// What was spent between `self` (earlier) and `later`, over `wall` seconds.
    fn until(&self, later: &ClientTimes, wall: f64) -> ClientTimes {
        ClientTimes {
            wall,
            cpu: later.cpu - self.cpu,
            runqueue: later.runqueue - self.runqueue,
        }
    }

    /// Both summed.
    pub fn plus(&self, o: &ClientTimes) -> ClientTimes {
        ClientTimes {
            wall: self.wall + o.wall,
            cpu: self.cpu + o.cpu,
            runqueue: self.runqueue + o.runqueue,
        }
    }

    /// The seconds left when the CPU and the run queue are taken from the wall time: blocked (on the device,
    /// a lock, a stall).
    pub fn blocked(&self) -> f64 {
        (self.wall - self.cpu - self.runqueue).max(0.0)
    }
}

/// What a phase measured.
#[derive(Clone, Debug, Serialize)]
pub struct PhaseReport {
    /// Operations.
    pub operations: u64,
    /// Wall-clock seconds.
    pub seconds: f64,
    /// Operations per second.
    pub throughput: f64,
    /// Per operation type: read, update, insert, scan, rmw.
    pub ops: Vec<(String, OpReport)>,
    /// Read-path block reads per operation.
    pub read_ios_per_op: Option<f64>,
    /// Flush and compaction block reads and writes per operation.
    pub background_ios_per_op: Option<f64>,
    /// Errors returned by the store.
    pub errors: u64,
    /// Wrong results: reads and scans whose answers contradict what was acknowledged (see [`verify`]).
    pub wrong: u64,
    /// The first wrong result, described.
    pub first_wrong: Option<String>,
    /// Records this phase inserted (a later phase continues after them: `CoreWorkload::inserted_before`).
    pub inserted: u64,
    /// Where the client threads' time went (`None` where the OS does not say).
    pub client: Option<ClientTimes>,
}

impl PhaseReport {
    /// Folds a later slice of the same phase into this one: counts, seconds, inserts and errors add up, and
    /// per-operation figures (I/Os, latency percentiles) become count-weighted means of the slices'. The
    /// percentiles are then approximate; the I/O means are exact.
    pub fn absorb(&mut self, other: PhaseReport) {
        let weigh = |a: Option<f64>, na: u64, b: Option<f64>, nb: u64| match (a, b) {
            (Some(a), Some(b)) if na + nb > 0 => {
                Some((a * na as f64 + b * nb as f64) / (na + nb) as f64)
            }
            (a, None) => a.filter(|_| nb == 0),
            (None, b) => b.filter(|_| na == 0),
            _ => None,
        };
        let (n0, n1) = (self.operations, other.operations);
        self.read_ios_per_op = weigh(self.read_ios_per_op, n0, other.read_ios_per_op, n1);
        self.background_ios_per_op = weigh(
            self.background_ios_per_op,
            n0,
            other.background_ios_per_op,
            n1,
        );
        for (name, o) in other.ops {
            match self.ops.iter_mut().find(|(n, _)| *n == name) {
                Some((_, mine)) => {
                    let (a, b) = (mine.count, o.count);
                    let mean =
                        |x: f64, y: f64| (x * a as f64 + y * b as f64) / (a + b).max(1) as f64;
                    mine.p50_us = mean(mine.p50_us, o.p50_us);
                    mine.p95_us = mean(mine.p95_us, o.p95_us);
                    mine.p99_us = mean(mine.p99_us, o.p99_us);
                    mine.read_ios = weigh(mine.read_ios, a, o.read_ios, b);
                    mine.count += b;
                }
                None => self.ops.push((name, o)),
            }
        }
        self.operations += n1;
        self.seconds += other.seconds;
        self.throughput = self.operations as f64 / self.seconds.max(1e-9);
        self.errors += other.errors;
        self.wrong += other.wrong;
        if self.first_wrong.is_none() {
            self.first_wrong = other.first_wrong;
        }
        self.inserted += other.inserted;
        self.client = self.client.zip(other.client).map(|(a, b)| a.plus(&b));
    }
}

const KINDS: [&str; 5] = ["read", "update", "insert", "scan", "rmw"];

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
    let first_insert = if load {
        0
    } else {
        w.record_count + w.inserted_before
    };
    let inserted = AtomicU64::new(first_insert);
    let next_load = AtomicU64::new(w.loaded_before);
    let errors = AtomicU64::new(0);
    let wrong = AtomicU64::new(0);
    let first_wrong = std::sync::Mutex::new(None::<String>);
    let chooser = KeyChooser::new(w);
    // what a scan must not skip: the records acknowledged before this phase, in key order (made before the
    // clock starts)
    let order = (!load && w.scan > 0.0)
        .then(|| {
            verify::KeyOrder::new(ledger, w.record_count + w.inserted_before, |n| {
                key(n, w.hashed_keys)
            })
        })
        .flatten();
    let order = order.as_ref();
    let io_before = store.io();
    let start = Instant::now();
    let per_thread = store.thread_reads().is_some();
    let hists: Vec<ThreadLatencies> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..threads)
            .map(|t| {
                let (inserted, next_load, errors, wrong, first_wrong, chooser) = (
                    &inserted,
                    &next_load,
                    &errors,
                    &wrong,
                    &first_wrong,
                    &chooser,
                );
                s.spawn(move || {
                    let mut rng =
                        StdRng::seed_from_u64(seed ^ (t as u64).wrapping_mul(0x9E37_79B9));
                    // made when the thread first runs an operation of the kind: a workload uses 1-3 of 5
                    let mut h: Vec<Option<Histogram<u64>>> = vec![None; 5];
                    let mut reads = [0u64; 5];
                    let (times0, wall0) = (ClientTimes::of_this_thread(), Instant::now());
                    let my_ops =
                        ops / threads as u64 + u64::from((t as u64) < ops % threads as u64);
                    let len = w.value_bytes();
                    let key_of = |n: u64| key(n, w.hashed_keys);
                    // a write of record n: its next version, written under the record's lock
                    let write = |n: u64, f: WriteFn<'_>| {
                        let _g = ledger.lock(n);
                        let v = ledger.issue(n);
                        let k = key_of(n);
                        f(&k, &verify::make_value(n, v, len))?;
                        ledger.acknowledge(n, v, &k);
                        Ok(())
                    };
                    for _ in 0..my_ops {
                        let r0 = store.thread_reads();
                        let t0 = Instant::now();
                        // (kind, store error, wrong result)
                        let (kind, res): (usize, StoreResult<Result<(), String>>) = if load {
                            let n = next_load.fetch_add(1, Ordering::Relaxed);
                            let r = write(n, &|k, v| store.insert(k, v));
                            inserted.fetch_add(1, Ordering::Relaxed);
                            (2, r.map(Ok))
                        } else {
                            let x: f64 = rng.random();
                            let have = inserted.load(Ordering::Relaxed);
                            if x < w.read {
                                let n = chooser.next(&mut rng, have);
                                let floor = ledger.acknowledged(n);
                                let got = store.read(&key_of(n));
                                (0, got.map(|g| ledger.check_read(n, floor, g.as_deref())))
                            } else if x < w.read + w.update {
                                let n = chooser.next(&mut rng, have);
                                (1, write(n, &|k, v| store.update(k, v)).map(Ok))
                            } else if x < w.read + w.update + w.insert {
                                let n = inserted.fetch_add(1, Ordering::Relaxed);
                                (2, write(n, &|k, v| store.insert(k, v)).map(Ok))
                            } else if x < w.read + w.update + w.insert + w.scan {
                                let len = rng.random_range(1..=w.max_scan_length.max(1)) as usize;
                                let from = key_of(chooser.next(&mut rng, have));
                                let max_key = ledger.max_key();
                                let got = store.scan(&from, len);
                                (
                                    3,
                                    got.map(|e| {
                                        ledger.check_scan(&from, len, &max_key, &e, key_of, order)
                                    }),
                                )
                            } else {
                                let n = chooser.next(&mut rng, have);
                                let _g = ledger.lock(n);
                                let floor = ledger.acknowledged(n);
                                let v = ledger.issue(n);
                                let k = key_of(n);
                                let mut checked = Ok(());
                                let r = store.read_modify_write(&k, &mut |old| {
                                    checked = ledger.check_read(n, floor, old);
                                    verify::make_value(n, v, len)
                                });
                                if r.is_ok() {
                                    ledger.acknowledge(n, v, &k);
                                }
                                (4, r.map(|_| checked))
                            }
                        };
                        match res {
                            Err(_) => {
                                errors.fetch_add(1, Ordering::Relaxed);
                            }
                            Ok(Err(why)) => {
                                wrong.fetch_add(1, Ordering::Relaxed);
                                first_wrong
                                    .lock()
                                    .unwrap_or_else(|p| p.into_inner())
                                    .get_or_insert(why);
                            }
                            Ok(Ok(())) => {}
                        }
                        let micros = (t0.elapsed().as_micros() as u64).max(1);
                        if h[kind].is_none() {
                            h[kind] = latency_histogram();
                        }
                        if let Some(hist) = &mut h[kind] {
                            let _ = hist.record(micros);
                        }
                        if let (Some(a), Some(b)) = (r0, store.thread_reads()) {
                            reads[kind] += b - a;
                        }
                        if let Some(p) = progress {
                            p.fetch_add(1, Ordering::Relaxed);
                        }
                    }
                    let times = times0
                        .zip(ClientTimes::of_this_thread())
                        .map(|(a, b)| a.until(&b, wall0.elapsed().as_secs_f64()));
                    (h, reads, times)
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().unwrap_or_default())
            .collect()
    });
    let seconds = start.elapsed().as_secs_f64();
    let io_after = store.io();
    let mut ops_out = Vec::new();
    for (k, name) in KINDS.iter().enumerate() {
        let Some(mut merged) = latency_histogram() else {
            continue;
        };
        let mut reads = 0u64;
        for (h, r, _) in &hists {
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
    let per = |f: fn(&IoCounters) -> u64| match (io_before, io_after) {
        (Some(a), Some(b)) if ops > 0 => Some((f(&b) - f(&a)) as f64 / ops as f64),
        _ => None,
    };
    PhaseReport {
        operations: ops,
        seconds,
        throughput: ops as f64 / seconds.max(1e-9),
        ops: ops_out,
        read_ios_per_op: per(|c| c.reads),
        background_ios_per_op: per(|c| c.background),
        errors: errors.load(Ordering::Relaxed),
        wrong: wrong.load(Ordering::Relaxed),
        first_wrong: first_wrong.into_inner().unwrap_or_else(|p| p.into_inner()),
        inserted: inserted.load(Ordering::Relaxed) - first_insert,
        client: hists
            .iter()
            .map(|(_, _, t)| *t)
            .reduce(|a, b| a.zip(b).map(|(a, b)| a.plus(&b)))
            .flatten(),
    }
}

/// Resident memory of this process in bytes (Linux /proc/self/status VmRSS).
pub fn resident_bytes() -> Option<u64> {
    status_kb("VmRSS:")
}

/// Peak resident memory of this process in bytes so far (Linux /proc/self/status VmHWM, the high-water mark).
pub fn peak_resident_bytes() -> Option<u64> {
    status_kb("VmHWM:")
}

/// CPU seconds this process (all its threads) has spent so far, in user and in kernel mode: /proc/self/stat's
/// utime and stime, in clock ticks of 1/100 s (Linux's USER_HZ on every architecture it exports to user space).
pub fn cpu_seconds() -> Option<(f64, f64)> {
    let s = std::fs::read_to_string("/proc/self/stat").ok()?;
    // the fields after the command name, which is in parentheses and may hold spaces: state is field 3,
    // utime field 14, stime field 15
    let rest = &s[s.rfind(')')? + 1..];
    let mut fields = rest.split_whitespace().skip(11);
    let user: u64 = fields.next()?.parse().ok()?;
    let system: u64 = fields.next()?.parse().ok()?;
    Some((user as f64 / 100.0, system as f64 / 100.0))
}

fn status_kb(field: &str) -> Option<u64> {
    let s = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = s.lines().find(|l| l.starts_with(field))?;
    let kb: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb * 1024)
}

/// The operation types of Algorithm 1 (Cosine Section 4), in the φ library's order.
pub const CALIBRATION_OPS: [&str; 5] = ["lookup", "insert", "blind_update", "rmw", "range"];

/// The single-operation workload that measures one of [`CALIBRATION_OPS`]: uniform keys over `records`, `ops`
/// operations (a twentieth of them for range scans of 1..100 records).
pub fn calibration_workload(op: &str, records: u64, ops: u64) -> Option<CoreWorkload> {
    let mut w = CoreWorkload::named("c")?;
    w.name = format!("calibrate-{op}");
    w.distribution = Distribution::Uniform;
    (w.read, w.update, w.insert, w.scan, w.read_modify_write) = match op {
        "lookup" => (1.0, 0.0, 0.0, 0.0, 0.0),
        "insert" => (0.0, 0.0, 1.0, 0.0, 0.0),
        "blind_update" => (0.0, 1.0, 0.0, 0.0, 0.0),
        "rmw" => (0.0, 0.0, 0.0, 0.0, 1.0),
        "range" => (0.0, 0.0, 0.0, 1.0, 0.0),
        _ => return None,
    };
    w.record_count = records;
    w.operation_count = if op == "range" { ops / 20 } else { ops };
    w.max_scan_length = 100;
    Some(w)
}

/// One client thread's latency histograms and block reads, per operation kind (a histogram only for the kinds
/// it ran).
type ThreadLatencies = (Vec<Option<Histogram<u64>>>, [u64; 5], Option<ClientTimes>);

/// A latency histogram in microseconds, 1 µs to 60 s, to 2 significant digits (1%: enough for p50-p99; at
/// 3 digits every client thread's five histograms took 0.7 MB, which the process's peak memory counts).
fn latency_histogram() -> Option<Histogram<u64>> {
    Histogram::new_with_bounds(1, 60_000_000, 2).ok()
}

/// Rounds of Algorithm 1's timings: each round times 1..=η threads once, and each thread count keeps its best
/// time over the rounds (a shared machine only ever slows a run down, so the fastest is the least disturbed).
pub const CALIBRATION_ROUNDS: usize = 3;

/// Algorithm 1's timings of one operation type: the speedup of c threads over one, per thread count.
#[derive(Clone, Debug, PartialEq)]
pub struct Speedups {
    /// (c, T(1)/T(c)) from each thread count's best time over the rounds, for c = 2..=η.
    pub best: Vec<(usize, f64)>,
    /// The same ratio within each round alone (one run per thread count), for c = 2..=η: its spread says how
    /// much the machine's noise moved the measurement.
    pub rounds: Vec<Vec<(usize, f64)>>,
}

/// Algorithm 1's measurement on a store that `w` has been loaded into and settled: the same operations on 1
/// thread, then on c = 2..=`eta` threads, [`CALIBRATION_ROUNDS`] times over; returns the speedup T(1)/T(c)
/// for each c from the best time of each, and within each round. Inserts continue after the keys earlier
/// timings inserted, so every timed insert adds a new key.
pub fn measure_speedups(
    store: &dyn Store,
    ledger: &Ledger,
    w: &CoreWorkload,
    eta: usize,
) -> Result<Speedups, String> {
    let mut w = w.clone();
    let eta = eta.max(2);
    // best[i]: the fastest time on i + 1 threads
    let mut best = vec![f64::INFINITY; eta];
    let mut rounds = Vec::with_capacity(CALIBRATION_ROUNDS);
    for round in 0..CALIBRATION_ROUNDS {
        let mut times = vec![f64::INFINITY; eta];
        for (i, t) in best.iter_mut().enumerate() {
            let c = i + 1;
            let r = run_phase(
                store,
                ledger,
                &w,
                c,
                false,
                5 + (round * eta + c) as u64,
                None,
            );
            if let Some(why) = r.first_wrong {
                return Err(format!("{}: wrong result: {why}", store.name()));
            }
            w.inserted_before += r.inserted;
            *t = t.min(r.seconds);
            times[i] = r.seconds;
        }
        rounds.push(
            (2..=eta)
                .map(|c| (c, times[0] / times[c - 1].max(1e-9)))
                .collect(),
        );
    }
    Ok(Speedups {
        best: (2..=eta)
            .map(|c| (c, best[0] / best[c - 1].max(1e-9)))
            .collect(),
        rounds,
    })
}

/// φ of one operation type as Algorithm 1 measured it: the value a φ library keeps (Eq. 2 needs a fraction in
/// [0, 1]) and what the timings gave before it was bounded, so a speedup below 1 (more threads ran slower) or
/// above the core count is reported, never hidden.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PhiMeasurement {
    /// φ inverted from the best times (Eq. 2), unbounded: negative when more threads ran slower.
    pub measured: f64,
    /// The same, each thread count's φ bounded to [0, 1] before the mean (one thread count that ran slower
    /// counts as 0, not as a large negative that would cancel the others). `None` when no speedup was valid.
    pub bounded: Option<f64>,
    /// The lowest and highest φ of the single rounds (the spread the machine's noise gives).
    pub rounds: (f64, f64),
}

impl PhiMeasurement {
    /// From Algorithm 1's timings: the mean over c = 2..=η of φ inverted from each speedup.
    pub fn from_speedups(s: &Speedups) -> Self {
        let estimates = |v: &[(usize, f64)]| -> Vec<f64> {
            v.iter()
                .filter_map(|(c, g)| cosine_cost_model::cpu::phi_from_speedup(*g, *c as f64))
                .collect()
        };
        let phi_of = |v: &[(usize, f64)]| {
            let est = estimates(v);
            est.iter().sum::<f64>() / est.len().max(1) as f64
        };
        let best = estimates(&s.best);
        let bounded = (!best.is_empty())
            .then(|| best.iter().map(|p| p.clamp(0.0, 1.0)).sum::<f64>() / best.len() as f64);
        let per_round: Vec<f64> = s.rounds.iter().map(|r| phi_of(r)).collect();
        let lo = per_round.iter().copied().fold(f64::INFINITY, f64::min);
        let hi = per_round.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        let measured = phi_of(&s.best);
        PhiMeasurement {
            measured,
            bounded,
            rounds: if per_round.is_empty() {
                (measured, measured)
            } else {
                (lo, hi)
            },
        }
    }

    /// The value a φ library keeps: each thread count's φ bounded to [0, 1], then their mean (0 when no
    /// speedup could be measured, with a warning).
    pub fn phi(&self) -> f64 {
        self.bounded.unwrap_or(0.0)
    }

    /// What is wrong with the measurement, if anything: outside [0, 1] (and so bounded), or rounds that
    /// disagree by more than 0.2.
    pub fn warning(&self) -> Option<String> {
        let mut w = Vec::new();
        if self.bounded.is_none() {
            w.push("no valid speedup was measured, kept as 0".to_string());
        } else if self.measured < 0.0 {
            w.push(format!(
                "measured {:.3}: more threads ran slower than one (no parallel speedup), kept as 0",
                self.measured
            ));
        } else if self.measured > 1.0 {
            w.push(format!(
                "measured {:.3}: a speedup above the core count (caching or noise), kept as 1",
                self.measured
            ));
        }
        if self.rounds.1 - self.rounds.0 > 0.2 {
            w.push(format!(
                "noisy: single rounds gave {:.3} to {:.3}",
                self.rounds.0, self.rounds.1
            ));
        }
        (!w.is_empty()).then(|| w.join("; "))
    }
}

/// Puts one engine's measurements into a φ library: the bounded values as its entry, and a note for each
/// value that was bounded or noisy (replacing the engine's earlier notes).
pub fn record_phi(
    lib: &mut cosine_cost_model::cpu::PhiLibrary,
    name: &str,
    measured: &[PhiMeasurement; 5],
) {
    let all: Vec<(&str, PhiMeasurement)> = CALIBRATION_OPS.into_iter().zip(*measured).collect();
    record_phi_partial(lib, name, &all, "");
}

/// Puts the measured operation types of one engine into a φ library, keeping the library's values for the
/// others (an engine that cannot run an operation type, such as FASTER's ordered scans), each with a note
/// saying why it was not measured. The engine's earlier notes are replaced.
pub fn record_phi_partial(
    lib: &mut cosine_cost_model::cpu::PhiLibrary,
    name: &str,
    measured: &[(&str, PhiMeasurement)],
    not_measured: &str,
) {
    let mut entry = lib
        .get(name)
        .or_else(|| cosine_cost_model::cpu::PhiLibrary::paper().get(name))
        .unwrap_or(cosine_cost_model::cpu::PhiEntry::from_ops([0.0; 5]));
    lib.notes
        .retain(|k, _| k.split_once('.').map(|(e, _)| e) != Some(name));
    for op in CALIBRATION_OPS {
        let slot = match op {
            "lookup" => &mut entry.lookup,
            "insert" => &mut entry.insert,
            "blind_update" => &mut entry.blind_update,
            "rmw" => &mut entry.rmw,
            _ => &mut entry.range,
        };
        match measured.iter().find(|(o, _)| *o == op) {
            Some((_, m)) => {
                *slot = m.phi();
                if let Some(w) = m.warning() {
                    lib.notes.insert(format!("{name}.{op}"), w);
                }
            }
            None => {
                lib.notes.insert(
                    format!("{name}.{op}"),
                    format!("not measured ({not_measured}): {slot:.3} kept from the base library"),
                );
            }
        }
    }
    lib.entries.insert(name.to_string(), entry);
}

/// One line for a calibration's progress: the φ kept, and the warning if the measurement has one.
pub fn phi_line(name: &str, op: &str, m: &PhiMeasurement) -> String {
    let mut line = format!(
        "  {name:<10} {op:<13} phi {:.3} (rounds {:.3}-{:.3})",
        m.phi(),
        m.rounds.0,
        m.rounds.1
    );
    if let Some(w) = m.warning() {
        line.push_str("  WARNING: ");
        line.push_str(&w);
    }
    line
}

/// What [`calibrate`] asks its `open` for: a fresh store to load, then the same directory again for the timings.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CalibrationStage {
    /// A fresh, empty store in the engine's own configuration, which `calibrate` loads and settles.
    Load,
    /// The loaded store, reopened for the timings with room for `write_room` bytes of writes (0 for lookups
    /// and scans) in its write buffer, so that no flush or compaction runs while the threads are timed.
    /// Algorithm 1 times one query per core; on a machine with few cores a background flush would take a
    /// core from the timed threads, and every write operation would look serial (φ ≈ 0). Flush and
    /// compaction I/O is the I/O model's to charge, not φ's.
    Time {
        /// Bytes of writes the timings will make.
        write_room: u64,
    },
}

/// Bytes the timings of `op` write on `w` (all of [`measure_speedups`]' runs on 1..=`eta` threads, every
/// round), with room for the write buffer's own overhead per entry.
pub fn calibration_write_bytes(op: &str, w: &CoreWorkload, eta: usize) -> u64 {
    // a read-modify-write may store the whole record again (ours does), so every write counts a record
    let per_write = match op {
        "insert" | "blind_update" | "rmw" => w.value_bytes() as u64 + 24 + 96,
        _ => return 0,
    };
    w.operation_count * (eta.max(2) * CALIBRATION_ROUNDS) as u64 * per_write * 5 / 4
}

/// Algorithm 1 for one engine: for each of [`CALIBRATION_OPS`], `open` a fresh store
/// ([`CalibrationStage::Load`]), load `records` on `eta` threads, settle, close it, `open` it again for the
/// timings ([`CalibrationStage::Time`]), time the operation on 1..=`eta` threads and invert Eq. 2. Returns the
/// measurement per operation (averaged over c, unbounded, with the rounds' spread) in [`CALIBRATION_OPS`]'
/// order; `done` hears each one after its store is dropped (to remove its directory and report it).
pub fn calibrate(
    records: u64,
    ops: u64,
    eta: usize,
    open: impl FnMut(&str, &CoreWorkload, CalibrationStage) -> Result<Box<dyn Store>, String>,
    done: impl FnMut(&str, &PhiMeasurement),
) -> Result<[PhiMeasurement; 5], String> {
    let measured = calibrate_ops(records, ops, eta, &CALIBRATION_OPS, open, done)?;
    Ok(std::array::from_fn(|i| measured[i].1))
}

/// [`calibrate`] on some of the operation types (each one of [`CALIBRATION_OPS`]), in the order given.
pub fn calibrate_ops<'a>(
    records: u64,
    ops: u64,
    eta: usize,
    which: &[&'a str],
    mut open: impl FnMut(&str, &CoreWorkload, CalibrationStage) -> Result<Box<dyn Store>, String>,
    mut done: impl FnMut(&str, &PhiMeasurement),
) -> Result<Vec<(&'a str, PhiMeasurement)>, String> {
    let mut phis = vec![
        (
            "",
            PhiMeasurement {
                measured: 0.0,
                bounded: None,
                rounds: (0.0, 0.0),
            }
        );
        which.len()
    ];
    for ((name, slot), op) in phis.iter_mut().zip(which) {
        *name = op;
        let w = calibration_workload(op, records, ops)
            .ok_or_else(|| format!("{op} is not an operation type of Algorithm 1"))?;
        let store = open(op, &w, CalibrationStage::Load)?;
        let ledger = Ledger::default();
        run_phase(store.as_ref(), &ledger, &w, eta, true, 3, None);
        store.settle().map_err(|e| e.to_string())?;
        drop(store);
        let write_room = calibration_write_bytes(op, &w, eta);
        let store = open(op, &w, CalibrationStage::Time { write_room })?;
        let speedups = measure_speedups(store.as_ref(), &ledger, &w, eta)?;
        drop(store);
        *slot = PhiMeasurement::from_speedups(&speedups);
        done(op, slot);
    }
    Ok(phis)
}

#[cfg(test)]
mod tests {
    #[test]
    fn cpu_seconds_grow_with_work_done() {
        let (user0, system0) = super::cpu_seconds().expect("/proc/self/stat");
        // spin until the user time has moved by a few ticks (a tick is 10 ms), at most 5 s of wall time
        let started = std::time::Instant::now();
        let mut x = 0u64;
        while super::cpu_seconds().unwrap().0 < user0 + 0.05 && started.elapsed().as_secs() < 5 {
            for i in 0..100_000u64 {
                x = std::hint::black_box(x.wrapping_mul(6364136223846793005).wrapping_add(i));
            }
        }
        let (user1, system1) = super::cpu_seconds().unwrap();
        assert!(user1 >= user0 + 0.05, "user {user0} -> {user1}");
        assert!(system1 >= system0);
    }

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
    fn a_slowdown_or_a_noisy_phi_is_reported_not_hidden() {
        use super::{record_phi, PhiMeasurement, Speedups};
        // two threads ran slower than one: Eq. 2 gives a negative φ, which is kept as 0 and said so
        let slower = PhiMeasurement::from_speedups(&Speedups {
            best: vec![(2, 0.8)],
            rounds: vec![vec![(2, 0.8)], vec![(2, 0.75)], vec![(2, 0.7)]],
        });
        assert!((slower.measured - (-0.5)).abs() < 1e-9, "{slower:?}");
        assert_eq!(slower.phi(), 0.0);
        assert!(slower.warning().unwrap().contains("ran slower"));
        // rounds that disagree are flagged even when the best times give a clean value
        let noisy = PhiMeasurement::from_speedups(&Speedups {
            best: vec![(2, 1.6)],
            rounds: vec![vec![(2, 1.1)], vec![(2, 1.6)], vec![(2, 1.9)]],
        });
        assert!((noisy.phi() - 0.75).abs() < 1e-9);
        assert!(noisy.warning().unwrap().contains("noisy"));
        // one thread count that ran slower counts as 0 in the mean, not as a large negative
        let mixed = PhiMeasurement::from_speedups(&Speedups {
            best: vec![(2, 1.8), (3, 0.5)],
            rounds: vec![vec![(2, 1.8), (3, 0.5)]],
        });
        assert!(
            (mixed.phi() - (1.0 - 1.0 / 1.8) / 0.5 / 2.0).abs() < 1e-9,
            "{mixed:?}"
        );
        assert!(mixed.measured < 0.0 && mixed.warning().is_some());
        // nothing measurable: 0, and said so
        let none = PhiMeasurement::from_speedups(&Speedups {
            best: vec![(2, 0.0)],
            rounds: vec![],
        });
        assert_eq!(none.phi(), 0.0);
        assert!(none.warning().unwrap().contains("no valid speedup"));
        let clean = PhiMeasurement::from_speedups(&Speedups {
            best: vec![(2, 1.8)],
            rounds: vec![vec![(2, 1.75)], vec![(2, 1.8)], vec![(2, 1.78)]],
        });
        assert_eq!(clean.warning(), None);
        // the library keeps the bounded value and a note; a new measurement replaces the old notes
        let mut lib = cosine_cost_model::cpu::PhiLibrary::paper();
        record_phi(&mut lib, "rocksdb", &[clean, slower, clean, noisy, clean]);
        assert_eq!(lib.entries["rocksdb"].insert, 0.0);
        assert!(lib.notes["rocksdb.insert"].contains("kept as 0"));
        assert!(lib.notes.contains_key("rocksdb.rmw"));
        assert_eq!(lib.notes_of("rocksdb").count(), 2);
        record_phi(&mut lib, "rocksdb", &[clean; 5]);
        assert!(lib.notes.is_empty());
    }

    #[test]
    fn calibration_workloads_measure_one_operation_each() {
        for op in super::CALIBRATION_OPS {
            let w = super::calibration_workload(op, 1000, 2000).unwrap();
            let shares = [w.read, w.update, w.insert, w.scan, w.read_modify_write];
            assert_eq!(shares.iter().filter(|x| **x == 1.0).count(), 1, "{op}");
            w.validate().unwrap();
        }
        assert!(super::calibration_workload("delete", 1, 1).is_none());
    }

    use super::*;
    use cosine_engine::{Design, Options, SyncMode};

    #[test]
    fn zipfian_is_skewed_and_latest_favours_new_records() {
        let mut rng = StdRng::seed_from_u64(1);
        let z = KeyChooser::new(&CoreWorkload::named("a").unwrap());
        let mut counts = vec![0u32; 1000];
        for _ in 0..100_000 {
            counts[z.next(&mut rng, 1000) as usize] += 1;
        }
        counts.sort_unstable_by(|a, b| b.cmp(a));
        assert!(
            counts[0] > 20 * counts[500].max(1),
            "top {} vs median {}",
            counts[0],
            counts[500]
        );
        let l = KeyChooser::new(&CoreWorkload::named("d").unwrap());
        let recent = (0..10_000)
            .filter(|_| l.next(&mut rng, 1_000_000) > 999_000)
            .count();
        assert!(recent > 5_000, "{recent}");
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

    fn report(ops: &[(&str, u64, f64)], seconds: f64, inserted: u64) -> PhaseReport {
        let total: u64 = ops.iter().map(|o| o.1).sum();
        let reads: f64 = ops.iter().map(|o| o.1 as f64 * o.2).sum();
        PhaseReport {
            operations: total,
            seconds,
            throughput: total as f64 / seconds,
            ops: ops
                .iter()
                .map(|&(n, count, io)| {
                    let o = OpReport {
                        count,
                        p50_us: io * 10.0,
                        p95_us: 0.0,
                        p99_us: 0.0,
                        read_ios: Some(io),
                    };
                    (n.to_string(), o)
                })
                .collect(),
            read_ios_per_op: Some(reads / total as f64),
            background_ios_per_op: None,
            errors: 1,
            wrong: 0,
            first_wrong: None,
            inserted,
            client: None,
        }
    }

    #[test]
    fn slices_of_a_phase_fold_into_one_report() {
        let mut a = report(&[("read", 300, 1.0), ("insert", 100, 0.0)], 2.0, 100);
        a.absorb(report(&[("read", 100, 3.0), ("scan", 50, 20.0)], 1.0, 0));
        assert_eq!((a.operations, a.errors, a.inserted), (550, 2, 100));
        assert!((a.throughput - 550.0 / 3.0).abs() < 1e-9);
        let read = &a.ops.iter().find(|o| o.0 == "read").unwrap().1;
        assert_eq!(read.count, 400);
        assert!((read.read_ios.unwrap() - 1.5).abs() < 1e-12);
        assert!((read.p50_us - 15.0).abs() < 1e-12);
        assert_eq!(a.ops.len(), 3);
        // the phase's mean is the mean over every operation of both slices
        let want = (300.0 * 1.0 + 100.0 * 3.0 + 50.0 * 20.0) / 550.0;
        assert!((a.read_ios_per_op.unwrap() - want).abs() < 1e-12);
        assert_eq!(a.background_ios_per_op, None);
    }
}
